package codec

import (
	"fmt"
	"strconv"
	"strings"
)

// The three POP response strings (remoting/.../header/ExtraInfoUtil.java):
//
//	startOffsetInfo  <retryFlag> <queueId> <startOffset>            e.g. "0 1 40;1 0 7"
//	msgOffsetInfo    <retryFlag> <queueId> <off>[,<off>...]         e.g. "0 1 40,41,42;1 0 7"
//	orderCountInfo   <retryFlag> <queueId> <count>                  e.g. "0 1 2"
//	                 <retryFlag> qo<queueId>%<queueOffset> <count>  e.g. "0 qo1%40 2"
//
// Entries are joined by ';'. The Java client keys each entry by
// "<retryFlag>@<second field>" and rejects an entry without exactly three
// parts or a repeated key, so a broker must write one entry per (retryFlag,
// queueId), offsets in body order. The Append functions add the ';' when
// dst is not empty, so one buffer per string can be built entry by entry.

func appendInfoHead(dst []byte, flag RetryFlag, queueID int32) []byte {
	if len(dst) > 0 {
		dst = append(dst, ';')
	}
	dst = append(dst, '0'+byte(flag), ' ')
	dst = strconv.AppendInt(dst, int64(queueID), 10)
	return append(dst, ' ')
}

// AppendStartOffsetInfo appends one startOffsetInfo entry.
func AppendStartOffsetInfo(dst []byte, flag RetryFlag, queueID int32, startOffset int64) []byte {
	return strconv.AppendInt(appendInfoHead(dst, flag, queueID), startOffset, 10)
}

// AppendMsgOffsetInfo appends one msgOffsetInfo entry listing offsets in
// the order given (which must be the body order). offsets must not be empty.
func AppendMsgOffsetInfo(dst []byte, flag RetryFlag, queueID int32, offsets []int64) []byte {
	dst = appendInfoHead(dst, flag, queueID)
	for i, o := range offsets {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendInt(dst, o, 10)
	}
	return dst
}

// AppendOrderCountInfo appends a per-queue orderCountInfo entry.
func AppendOrderCountInfo(dst []byte, flag RetryFlag, queueID int32, count int32) []byte {
	return strconv.AppendInt(appendInfoHead(dst, flag, queueID), int64(count), 10)
}

// AppendOrderCountInfoOffset appends a per-message orderCountInfo entry
// "<flag> qo<queueId>%<queueOffset> <count>".
func AppendOrderCountInfoOffset(dst []byte, flag RetryFlag, queueID int32, queueOffset int64, count int32) []byte {
	if len(dst) > 0 {
		dst = append(dst, ';')
	}
	dst = append(dst, '0'+byte(flag), ' ', 'q', 'o')
	dst = strconv.AppendInt(dst, int64(queueID), 10)
	dst = append(dst, '%')
	dst = strconv.AppendInt(dst, queueOffset, 10)
	dst = append(dst, ' ')
	return strconv.AppendInt(dst, int64(count), 10)
}

// QueueKey identifies one (retryFlag, queueId) entry of an offset-info string.
type QueueKey struct {
	Flag    RetryFlag
	QueueID int32
}

// OrderCountKey identifies an orderCountInfo entry; HasOffset marks the
// per-message "qo<queueId>%<queueOffset>" form.
type OrderCountKey struct {
	Flag        RetryFlag
	QueueID     int32
	QueueOffset int64
	HasOffset   bool
}

// splitInfo calls fn(flag, second, third) for each entry of s; it checks
// the three-part shape and the flag. Errors wrap ErrInvalidField.
func splitInfo(name, s string, fn func(flag RetryFlag, second, third string) error) error {
	for entry := range strings.SplitSeq(s, ";") {
		p1, rest, ok1 := strings.Cut(entry, " ")
		p2, p3, ok2 := strings.Cut(rest, " ")
		if !ok1 || !ok2 || strings.IndexByte(p3, ' ') >= 0 || p2 == "" || p3 == "" {
			return fmt.Errorf("%w: %s entry %q does not have 3 parts", ErrInvalidField, name, entry)
		}
		flag, ok := ParseRetryFlag(p1)
		if !ok {
			return fmt.Errorf("%w: %s entry %q: bad retry flag", ErrInvalidField, name, entry)
		}
		if err := fn(flag, p2, p3); err != nil {
			return fmt.Errorf("%w: %s entry %q: %v", ErrInvalidField, name, entry, err)
		}
	}
	return nil
}

func parseQueueID(s string) (int32, error) {
	v, err := strconv.ParseInt(s, 10, 32)
	return int32(v), err
}

// ParseStartOffsetInfo parses a startOffsetInfo string. An empty string
// gives an empty map. Errors wrap ErrInvalidField (bad shape, bad number,
// repeated key).
func ParseStartOffsetInfo(s string) (map[QueueKey]int64, error) {
	out := map[QueueKey]int64{}
	if s == "" {
		return out, nil
	}
	err := splitInfo("startOffsetInfo", s, func(flag RetryFlag, q, v string) error {
		qid, err := parseQueueID(q)
		if err != nil {
			return err
		}
		off, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return err
		}
		k := QueueKey{flag, qid}
		if _, dup := out[k]; dup {
			return fmt.Errorf("repeated key")
		}
		out[k] = off
		return nil
	})
	return out, err
}

// ParseMsgOffsetInfo parses a msgOffsetInfo string into per-queue offset
// lists in the order written. Errors wrap ErrInvalidField.
func ParseMsgOffsetInfo(s string) (map[QueueKey][]int64, error) {
	out := map[QueueKey][]int64{}
	if s == "" {
		return out, nil
	}
	err := splitInfo("msgOffsetInfo", s, func(flag RetryFlag, q, v string) error {
		qid, err := parseQueueID(q)
		if err != nil {
			return err
		}
		k := QueueKey{flag, qid}
		if _, dup := out[k]; dup {
			return fmt.Errorf("repeated key")
		}
		var offs []int64
		for o := range strings.SplitSeq(v, ",") {
			n, err := strconv.ParseInt(o, 10, 64)
			if err != nil {
				return err
			}
			offs = append(offs, n)
		}
		out[k] = offs
		return nil
	})
	return out, err
}

// ParseOrderCountInfo parses an orderCountInfo string. Errors wrap ErrInvalidField.
func ParseOrderCountInfo(s string) (map[OrderCountKey]int32, error) {
	out := map[OrderCountKey]int32{}
	if s == "" {
		return out, nil
	}
	err := splitInfo("orderCountInfo", s, func(flag RetryFlag, q, v string) error {
		k := OrderCountKey{Flag: flag}
		if rest, ok := strings.CutPrefix(q, "qo"); ok {
			qs, os, ok := strings.Cut(rest, "%")
			if !ok {
				return fmt.Errorf("missing %%")
			}
			var err error
			if k.QueueID, err = parseQueueID(qs); err != nil {
				return err
			}
			if k.QueueOffset, err = strconv.ParseInt(os, 10, 64); err != nil {
				return err
			}
			k.HasOffset = true
		} else {
			var err error
			if k.QueueID, err = parseQueueID(q); err != nil {
				return err
			}
		}
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return err
		}
		if _, dup := out[k]; dup {
			return fmt.Errorf("repeated key")
		}
		out[k] = int32(n)
		return nil
	})
	return out, err
}
