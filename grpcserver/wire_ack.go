package grpcserver

import (
	"unicode/utf8"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// Field numbers of AckMessageRequest, AckMessageEntry and Resource
// (service.proto, definition.proto).
const (
	fieldAckGroup   = 1
	fieldAckTopic   = 2
	fieldAckEntries = 3

	fieldEntryMessageID     = 1
	fieldEntryReceiptHandle = 2
	fieldEntryLiteTopic     = 3

	fieldResourceNamespace = 1
	fieldResourceName      = 2
)

// decodeAckRequest decodes an AckMessageRequest by hand into m (reset
// first) and reports true when b holds only the fields it knows, each once
// where it is singular, all length-delimited and well formed, every string
// valid UTF-8. Anything else is declined (false, m untouched) and left to
// protobuf, which keeps unknown fields, merges repeated ones and refuses
// what is malformed as it always did. protobuf would give m the same value
// (FuzzDecodeAckRequest). The result is one copy of b, which every string
// shares, one array of entries and one of pointers to them, where protobuf
// allocates each entry and each string on its own.
func decodeAckRequest(b []byte, m *v2.AckMessageRequest) bool {
	n, ok := scanAckRequest(b)
	if !ok {
		return false
	}
	proto.Reset(m)
	s := string(b)
	entries := make([]v2.AckMessageEntry, n)
	if n > 0 {
		m.Entries = make([]*v2.AckMessageEntry, n)
	}
	for at, e := 0, 0; at < len(b); {
		num, v := nextField(b, at)
		switch num {
		case fieldAckGroup:
			m.Group = resourceOf(b, s, v.from, v.to)
		case fieldAckTopic:
			m.Topic = resourceOf(b, s, v.from, v.to)
		case fieldAckEntries:
			m.Entries[e] = &entries[e]
			fillEntry(&entries[e], b, s, v.from, v.to)
			e++
		}
		at = v.to
	}
	return true
}

// scanAckRequest checks b as decodeAckRequest describes and counts its
// entries.
func scanAckRequest(b []byte) (entries int, ok bool) {
	var seen [fieldAckTopic + 1]bool
	return entries, eachField(b, func(num protowire.Number, v []byte) bool {
		switch num {
		case fieldAckGroup, fieldAckTopic:
			if seen[num] {
				return false
			}
			seen[num] = true
			var strSeen [fieldResourceName + 1]bool
			return eachField(v, func(num protowire.Number, v []byte) bool {
				return stringField(num, v, fieldResourceName, strSeen[:])
			})
		case fieldAckEntries:
			entries++
			var strSeen [fieldEntryLiteTopic + 1]bool
			return eachField(v, func(num protowire.Number, v []byte) bool {
				return stringField(num, v, fieldEntryLiteTopic, strSeen[:])
			})
		}
		return false
	})
}

// stringField accepts field num, with content v, of a message whose fields
// 1..last are singular strings: seen marks the fields met so far.
func stringField(num protowire.Number, v []byte, last protowire.Number, seen []bool) bool {
	if num < 1 || num > last || seen[num] || !utf8.Valid(v) {
		return false
	}
	seen[num] = true
	return true
}

// eachField calls fn with the number and content of each field of b, all
// of which must be length-delimited; false when one is not, b is
// malformed, or fn returns false.
func eachField(b []byte, fn func(num protowire.Number, v []byte) bool) bool {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || typ != protowire.BytesType {
			return false
		}
		v, m := protowire.ConsumeBytes(b[n:])
		if m < 0 || !fn(num, v) {
			return false
		}
		b = b[n+m:]
	}
	return true
}

// resourceOf decodes the Resource in b[from:to], checked by
// scanAckRequest, its strings substrings of s (the same bytes as b).
func resourceOf(b []byte, s string, from, to int) *v2.Resource {
	r := &v2.Resource{}
	for at := from; at < to; {
		num, v := nextField(b, at)
		switch num {
		case fieldResourceNamespace:
			r.ResourceNamespace = s[v.from:v.to]
		case fieldResourceName:
			r.Name = s[v.from:v.to]
		}
		at = v.to
	}
	return r
}

// fillEntry decodes the AckMessageEntry in b[from:to] into e, as
// resourceOf.
func fillEntry(e *v2.AckMessageEntry, b []byte, s string, from, to int) {
	for at := from; at < to; {
		num, v := nextField(b, at)
		switch num {
		case fieldEntryMessageID:
			e.MessageId = s[v.from:v.to]
		case fieldEntryReceiptHandle:
			e.ReceiptHandle = s[v.from:v.to]
		case fieldEntryLiteTopic:
			lite := s[v.from:v.to]
			e.LiteTopic = &lite
		}
		at = v.to
	}
}

// span is a field's content, b[from:to].
type span struct{ from, to int }

// nextField returns the number and content of the field at b[at:].
// REQUIRES: the field was checked (eachField).
func nextField(b []byte, at int) (protowire.Number, span) {
	num, _, tagLen := protowire.ConsumeTag(b[at:])
	v, vLen := protowire.ConsumeBytes(b[at+tagLen:])
	end := at + tagLen + vLen
	return num, span{end - len(v), end}
}
