package popstore

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"
)

// The §2.2 layout, byte by byte, for a small key.
func TestCheckpointKeyLayout(t *testing.T) {
	k := CheckpointKey{VisibleAtMillis: 0x0102030405060708, Group: "g", Topic: "t", QueueId: -2, QueueOffset: 9}
	want := "" +
		"0102030405060708" + // visibleAt i64 BE
		"67" + "40" + // "g" '@'
		"74" + "40" + // "t" '@'
		"fffffffe" + "40" + // queueId -2 as u32 BE, '@'
		"0000000000000009" // queueOffset u64 BE
	if got := hex.EncodeToString(k.Bytes()); got != want {
		t.Fatalf("key = %s, want %s", got, want)
	}
	if n := len(k.Bytes()); n != 23+len(k.Group)+len(k.Topic) {
		t.Fatalf("key length %d", n)
	}
	back, err := DecodeCheckpointKey(k.Bytes())
	if err != nil || back != k {
		t.Fatalf("decode = %+v, %v; want %+v", back, err, k)
	}
}

func TestCheckpointKeyOrderIsTimeOrder(t *testing.T) {
	a := CheckpointKey{VisibleAtMillis: 1000, Group: "zzz", Topic: "zzz", QueueId: 7, QueueOffset: 99}
	b := CheckpointKey{VisibleAtMillis: 1001, Group: "a", Topic: "a", QueueId: 0, QueueOffset: 0}
	if bytes.Compare(a.Bytes(), b.Bytes()) >= 0 {
		t.Fatal("earlier visibleAt must sort first")
	}
}

func TestDecodeCheckpointKeyRejectsGarbage(t *testing.T) {
	for _, b := range [][]byte{nil, make([]byte, 22), bytes.Repeat([]byte{1}, 30)} {
		if _, err := DecodeCheckpointKey(b); !errors.Is(err, ErrBadRecord) {
			t.Errorf("DecodeCheckpointKey(%x) err = %v", b, err)
		}
	}
}

func TestCheckpointValueRoundTrip(t *testing.T) {
	in := Checkpoint{PopTimeMillis: 1700000000000, InvisibleTimeMillis: 60000, ReviveQid: 999,
		RetryFlag: 2, AttemptTimes: 3, Suspend: true, AttemptId: "attempt-1"}
	v := in.appendValue(nil)
	if len(v) != 29+len(in.AttemptId) {
		t.Fatalf("value length %d", len(v))
	}
	var out Checkpoint
	if err := out.decodeValue(v); err != nil {
		t.Fatal(err)
	}
	if out != in {
		t.Fatalf("round trip %+v != %+v", out, in)
	}
	if err := out.decodeValue(v[:len(v)-1]); !errors.Is(err, ErrBadRecord) {
		t.Fatalf("truncated value err = %v", err)
	}
	v[0] = 9
	if err := out.decodeValue(v); !errors.Is(err, ErrBadRecord) {
		t.Fatalf("unknown version err = %v", err)
	}
}

func TestOffsetAndQueueMetaKeysRoundTrip(t *testing.T) {
	g, tp, q, ok := parseOffsetKey(offsetKey("grp", "%RETRY%grp", 70000))
	if !ok || g != "grp" || tp != "%RETRY%grp" || q != 70000 {
		t.Fatalf("offset key round trip: %q %q %d %v", g, tp, q, ok)
	}
	tp, q, ok = parseQueueMetaKey(queueMetaKey("TopicA", 3))
	if !ok || tp != "TopicA" || q != 3 {
		t.Fatalf("queue meta key round trip: %q %d %v", tp, q, ok)
	}
}
