package codec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrBadExtraInfo reports that a receipt handle (extraInfo / POP_CK)
// cannot be decoded. Handlers answer it with a non-success code naming the
// bad field and must not act on any part of the handle.
var ErrBadExtraInfo = errors.New("codec: invalid receipt handle")

// PopOrderReviveQueue is the reviveQid of orderly pops (KeyBuilder.POP_ORDER_REVIVE_QUEUE).
const PopOrderReviveQueue int32 = 999

// RetryFlag is receipt field 4: which topic the message was popped from.
type RetryFlag uint8

// Retry flags (ExtraInfoUtil.getRetry).
const (
	RetryFlagNormal RetryFlag = 0 // the original topic
	RetryFlagV1     RetryFlag = 1 // pop retry topic %RETRY%group_topic (or any other %RETRY% name)
	RetryFlagV2     RetryFlag = 2 // pop retry topic %RETRY%group+topic
)

// String returns "0", "1" or "2", the wire form.
func (f RetryFlag) String() string { return string('0' + byte(f)) }

// ParseRetryFlag parses the wire form "0", "1" or "2".
func ParseRetryFlag(s string) (RetryFlag, bool) {
	if len(s) == 1 && s[0] >= '0' && s[0] <= '2' {
		return RetryFlag(s[0] - '0'), true
	}
	return 0, false
}

// ExtraInfo is a decoded receipt handle (remoting/.../header/ExtraInfoUtil.java):
//
//	<ckQueueOffset> <popTime> <invisibleTime> <reviveQid> <retryFlag> <brokerName> <queueId> <queueOffset> [<commitLogOffset>]
//
// separated by single spaces. The ninth field is appended by the RocketMQ 5
// proxy and only carried along. Example: "40 1700000000000 60000 3 0 broker-a 1 42".
type ExtraInfo struct {
	CkQueueOffset      int64     // field 0: first offset read from the queue by that pop (the checkpoint's start offset)
	PopTime            int64     // field 1: broker clock of the pop, milliseconds
	InvisibleTime      int64     // field 2: milliseconds
	ReviveQid          int32     // field 3: PopOrderReviveQueue for orderly pops
	RetryFlag          RetryFlag // field 4
	BrokerName         string    // field 5
	QueueID            int32     // field 6
	QueueOffset        int64     // field 7: the message's own queue offset
	CommitLogOffset    int64     // field 8 when HasCommitLogOffset
	HasCommitLogOffset bool
}

var extraInfoFields = [...]string{"ckQueueOffset", "popTime", "invisibleTime", "reviveQid", "retryFlag", "brokerName", "queueId", "queueOffset", "commitLogOffset"}

func badExtraInfo(s string, field int, why string) error {
	return fmt.Errorf("%w: field %d (%s) %s in %s", ErrBadExtraInfo, field, extraInfoFields[field], why, quoteShort(s))
}

// ParseExtraInfo decodes a receipt handle. It accepts exactly 8 or 9
// space-separated fields; numbers must be plain decimal int64/int32,
// field 4 must be 0, 1 or 2 and field 5 non-empty. Errors wrap
// ErrBadExtraInfo and name the field. BrokerName aliases s; nothing is
// allocated on success. The caller still has to check BrokerName against its
// own name (CheckBroker) and the queue/offset against the request.
func ParseExtraInfo(s string) (ExtraInfo, error) {
	var e ExtraInfo
	rest := s
	for i := 0; ; i++ {
		if i == len(extraInfoFields) {
			return ExtraInfo{}, fmt.Errorf("%w: more than 9 fields in %s", ErrBadExtraInfo, quoteShort(s))
		}
		f := rest
		j := strings.IndexByte(rest, ' ')
		if j >= 0 {
			f, rest = rest[:j], rest[j+1:]
		}
		if f == "" {
			if s == "" {
				return ExtraInfo{}, fmt.Errorf("%w: empty", ErrBadExtraInfo)
			}
			return ExtraInfo{}, badExtraInfo(s, i, "is empty")
		}
		ok := true
		switch i {
		case 0:
			e.CkQueueOffset, ok = parseDecimal(f, 64)
		case 1:
			e.PopTime, ok = parseDecimal(f, 64)
		case 2:
			e.InvisibleTime, ok = parseDecimal(f, 64)
		case 3:
			var v int64
			v, ok = parseDecimal(f, 32)
			e.ReviveQid = int32(v)
		case 4:
			if e.RetryFlag, ok = ParseRetryFlag(f); !ok {
				return ExtraInfo{}, badExtraInfo(s, i, "is not 0, 1 or 2")
			}
		case 5:
			e.BrokerName = f
		case 6:
			var v int64
			v, ok = parseDecimal(f, 32)
			e.QueueID = int32(v)
		case 7:
			e.QueueOffset, ok = parseDecimal(f, 64)
		case 8:
			e.CommitLogOffset, ok = parseDecimal(f, 64)
			e.HasCommitLogOffset = true
		}
		if !ok {
			return ExtraInfo{}, badExtraInfo(s, i, "is not a number")
		}
		if j < 0 {
			if i < 7 {
				return ExtraInfo{}, fmt.Errorf("%w: %d fields, want 8 or 9, in %s", ErrBadExtraInfo, i+1, quoteShort(s))
			}
			return e, nil
		}
	}
}

// ErrForeignReceipt reports that a receipt handle names another broker.
var ErrForeignReceipt = errors.New("codec: receipt handle belongs to another broker")

// CheckBroker returns an error wrapping ErrForeignReceipt when the handle
// was issued by a broker other than brokerName (docs/SCENARIOS.md ACK-08 (c)).
func (e *ExtraInfo) CheckBroker(brokerName string) error {
	if e.BrokerName != brokerName {
		return fmt.Errorf("%w: handle is for %s, this broker is %q", ErrForeignReceipt, quoteShort(e.BrokerName), brokerName)
	}
	return nil
}

// IsOrder reports whether the handle came from an orderly pop (reviveQid 999).
func (e *ExtraInfo) IsOrder() bool { return e.ReviveQid == PopOrderReviveQueue }

// RealTopic returns the topic the message lives in: topic itself for
// RetryFlagNormal, else the pop retry topic of group and topic
// (ExtraInfoUtil.getRealTopic).
func (e *ExtraInfo) RealTopic(topic, group string) string {
	return RealTopic(topic, group, e.RetryFlag)
}

// AppendExtraInfo appends the handle's text form to dst (9 fields when
// HasCommitLogOffset). It does not allocate when dst has room.
func AppendExtraInfo(dst []byte, e *ExtraInfo) []byte {
	dst = strconv.AppendInt(dst, e.CkQueueOffset, 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, e.PopTime, 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, e.InvisibleTime, 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(e.ReviveQid), 10)
	dst = append(dst, ' ', '0'+byte(e.RetryFlag), ' ')
	dst = append(dst, e.BrokerName...)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(e.QueueID), 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, e.QueueOffset, 10)
	if e.HasCommitLogOffset {
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, e.CommitLogOffset, 10)
	}
	return dst
}

// String returns the text form of the handle.
func (e ExtraInfo) String() string {
	var buf [128]byte
	return string(AppendExtraInfo(buf[:0], &e))
}

// quoteShortBytes bounds how much of a client's input an error quotes.
const quoteShortBytes = 128

// quoteShort quotes s (%q) when it is at most quoteShortBytes long, else
// its first quoteShortBytes bytes followed by "…(N bytes)": a garbage
// receipt handle of 100 KB must not come back whole in every remark and
// gRPC status that names it.
func quoteShort(s string) string {
	if len(s) <= quoteShortBytes {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:quoteShortBytes]) + "…(" + strconv.Itoa(len(s)) + " bytes)"
}
