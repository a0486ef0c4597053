package popstore

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"testing"
)

// The key layout, byte by byte, for a small key.
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
	for _, in := range []Checkpoint{
		{PopTimeMillis: 1700000000000, InvisibleTimeMillis: 60000, ReviveQid: 999, RetryFlag: 2,
			AttemptTimes: 3, Suspend: true, PhysicalOffset: 123456789012, AttemptId: "attempt-1"},
		{PopTimeMillis: -5, InvisibleTimeMillis: math.MaxInt64, ReviveQid: math.MinInt32,
			AttemptTimes: math.MaxInt32, PhysicalOffset: 0},
		{PhysicalOffset: NoPhysicalOffset},
		{PhysicalOffset: math.MaxInt64, AttemptId: string(make([]byte, 300))},
	} {
		v := in.appendValue(nil)
		var out Checkpoint
		if err := out.decodeValue(v); err != nil {
			t.Fatalf("%+v: %v", in, err)
		}
		if out != in {
			t.Fatalf("round trip %+v != %+v", out, in)
		}
		for i := 0; i < len(v); i++ {
			if err := out.decodeValue(v[:i]); !errors.Is(err, ErrBadRecord) {
				t.Fatalf("%+v truncated to %d bytes: err = %v", in, i, err)
			}
		}
		if err := out.decodeValue(append(v, 0)); !errors.Is(err, ErrBadRecord) {
			t.Fatalf("trailing byte: err = %v", err)
		}
	}
}

// A pop-time checkpoint stays small: fixed fields as varints, no text.
func TestCheckpointValueIsCompact(t *testing.T) {
	ck := Checkpoint{PopTimeMillis: 1795948481086, InvisibleTimeMillis: 300000, PhysicalOffset: 7 << 30}
	if n := len(ck.appendValue(nil)); n > 24 {
		t.Fatalf("value of %d bytes", n)
	}
}

func TestCheckpointValueRejectsGarbage(t *testing.T) {
	good := (&Checkpoint{PopTimeMillis: 1, PhysicalOffset: 5}).appendValue(nil)
	overlong := append([]byte{checkpointValueV2, 0, 0}, bytes.Repeat([]byte{0xff}, 11)...)
	for name, v := range map[string][]byte{
		"empty":           nil,
		"unknown version": append([]byte{9}, good[1:]...),
		"unknown flag":    append([]byte{good[0], good[1] | 0x80}, good[2:]...),
		"overlong varint": overlong,
		"v1 too short":    {checkpointValueV1, 1, 2, 3},
		"v1 bad length":   append([]byte{checkpointValueV1}, make([]byte, 30)...),
		"attemptId len":   append(good[:len(good)-1:len(good)-1], 5, 'a'),
		"reviveQid range": {checkpointValueV2, 0, 0, 2, 2, 0x80, 0x80, 0x80, 0x80, 0x20, 0, 0},
	} {
		var out Checkpoint
		if err := out.decodeValue(v); !errors.Is(err, ErrBadRecord) {
			t.Errorf("%s (%x): err = %v", name, v, err)
		}
	}
}

// Values of format version 1 (data directories from before PhysicalOffset)
// still decode, with the physical offset unknown.
func TestCheckpointValueV1(t *testing.T) {
	v := []byte{checkpointValueV1}
	v = binary.BigEndian.AppendUint64(v, 1700000000000)
	v = binary.BigEndian.AppendUint64(v, 60000)
	v = binary.BigEndian.AppendUint32(v, 0)
	v = append(v, 2)
	v = binary.BigEndian.AppendUint32(v, 4)
	v = append(v, 1)
	v = binary.BigEndian.AppendUint16(v, 2)
	v = append(v, "id"...)
	var out Checkpoint
	if err := out.decodeValue(v); err != nil {
		t.Fatal(err)
	}
	want := Checkpoint{PopTimeMillis: 1700000000000, InvisibleTimeMillis: 60000, RetryFlag: 2, AttemptTimes: 4,
		Suspend: true, PhysicalOffset: NoPhysicalOffset, AttemptId: "id"}
	if out != want {
		t.Fatalf("got %+v, want %+v", out, want)
	}
}

// FuzzCheckpointValue: decoding never panics, and whatever decodes encodes
// back to a value that decodes to the same record.
func FuzzCheckpointValue(f *testing.F) {
	f.Add((&Checkpoint{PopTimeMillis: 1, InvisibleTimeMillis: 2, PhysicalOffset: 3, AttemptId: "x"}).appendValue(nil))
	f.Add((&Checkpoint{PhysicalOffset: NoPhysicalOffset, Suspend: true}).appendValue(nil))
	f.Add([]byte{checkpointValueV1})
	f.Fuzz(func(t *testing.T, v []byte) {
		var a, b Checkpoint
		if a.decodeValue(v) != nil {
			return
		}
		if err := b.decodeValue(a.appendValue(nil)); err != nil || a != b {
			t.Fatalf("re-encode of %x: %+v vs %+v (%v)", v, a, b, err)
		}
	})
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
