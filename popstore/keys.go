package popstore

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// Column family names. See doc.go for the key layout of each.
const (
	cfDefault  = "default"
	cfMessages = "messages"
	cfPop      = "pop"
	cfOffsets  = "offsets"
	cfMeta     = "meta"
	cfIndex    = "index"
)

// physPrefix starts every physical-offset index key in the messages column
// family. Topic names are never empty and never contain 0x00, so no message
// key starts with 0x00.
var physPrefix = []byte{0x00, 'P'}

// Prefixes of the meta column family.
const (
	metaTopicPrefix = "t/"
	metaGroupPrefix = "g/"
	metaQueuePrefix = "q/"
	metaUserPrefix  = "x/"
	metaPhysKey     = "s/phys"
	// metaGroupsVersionKey holds the group table's version stamp (groupsVersion).
	metaGroupsVersionKey = "s/groups"
)

// checkName reports ErrBadName for names that would make keys ambiguous.
func checkName(kind, name string) error {
	if name == "" || strings.IndexByte(name, 0) >= 0 || strings.IndexByte(name, '@') >= 0 {
		return fmt.Errorf("%w: %s %q", ErrBadName, kind, name)
	}
	return nil
}

// appendQueuePrefix appends topic 0x00 queueId(u32 BE).
func appendQueuePrefix(dst []byte, topic string, queueId int32) []byte {
	dst = append(dst, topic...)
	dst = append(dst, 0)
	return binary.BigEndian.AppendUint32(dst, uint32(queueId))
}

// messageKey is topic 0x00 queueId(u32 BE) queueOffset(u64 BE).
func messageKey(dst []byte, topic string, queueId int32, queueOffset int64) []byte {
	dst = appendQueuePrefix(dst, topic, queueId)
	return binary.BigEndian.AppendUint64(dst, uint64(queueOffset))
}

// topicMessagesRange returns [start, limit) covering every message key of a
// topic: topic 0x00 … up to topic 0x01.
func topicMessagesRange(topic string) (start, limit []byte) {
	start = append([]byte(topic), 0)
	limit = append([]byte(topic), 1)
	return start, limit
}

// physKey is 0x00 'P' physicalOffset(u64 BE).
func physKey(phys int64) []byte {
	k := make([]byte, 0, len(physPrefix)+8)
	k = append(k, physPrefix...)
	return binary.BigEndian.AppendUint64(k, uint64(phys))
}

// offsetKey is group 0x00 topic 0x00 queueId(u32 BE) in the offsets family.
func offsetKey(group, topic string, queueId int32) []byte {
	k := make([]byte, 0, len(group)+len(topic)+6)
	k = append(k, group...)
	k = append(k, 0)
	return appendQueuePrefix(k, topic, queueId)
}

// parseOffsetKey is the inverse of offsetKey.
func parseOffsetKey(k []byte) (group, topic string, queueId int32, ok bool) {
	if len(k) < 6 {
		return "", "", 0, false
	}
	qid := int32(binary.BigEndian.Uint32(k[len(k)-4:]))
	rest := k[:len(k)-4]
	if rest[len(rest)-1] != 0 {
		return "", "", 0, false
	}
	rest = rest[:len(rest)-1]
	i := strings.IndexByte(string(rest), 0)
	if i <= 0 {
		return "", "", 0, false
	}
	return string(rest[:i]), string(rest[i+1:]), qid, true
}

// queueMetaKey is "q/" topic 0x00 queueId(u32 BE) in the meta family.
func queueMetaKey(topic string, queueId int32) []byte {
	k := make([]byte, 0, len(metaQueuePrefix)+len(topic)+5)
	k = append(k, metaQueuePrefix...)
	return appendQueuePrefix(k, topic, queueId)
}

// parseQueueMetaKey is the inverse of queueMetaKey.
func parseQueueMetaKey(k []byte) (topic string, queueId int32, ok bool) {
	if len(k) < len(metaQueuePrefix)+6 {
		return "", 0, false
	}
	body := k[len(metaQueuePrefix):]
	if body[len(body)-5] != 0 {
		return "", 0, false
	}
	return string(body[:len(body)-5]), int32(binary.BigEndian.Uint32(body[len(body)-4:])), true
}

// prefixLimit returns the smallest key greater than every key with prefix p
// (p must not be all 0xff bytes).
func prefixLimit(p []byte) []byte {
	l := append([]byte(nil), p...)
	for i := len(l) - 1; i >= 0; i-- {
		if l[i] != 0xff {
			l[i]++
			return l[:i+1]
		}
	}
	return nil
}

func putInt64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

func getInt64(b []byte) (int64, bool) {
	if len(b) != 8 {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(b)), true
}
