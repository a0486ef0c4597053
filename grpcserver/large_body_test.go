package grpcserver

import (
	"bytes"
	"crypto/rand"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
)

// Bodies on both sides of the 32 KiB from which the store reads records
// with pread instead of out of the commit log's mapping, sent as one batch
// (the commit log) and received in one POP, come back byte for byte.
func TestLargeBodiesRoundTrip(t *testing.T) {
	f := newFixture(t, nil, nil)
	topic, group := unique("large"), unique("cg")
	f.createTopic(topic, 1, "")
	sizes := []int{31 << 10, 32 << 10, 200 << 10, 1 << 20, 3 << 20, 100}
	want := map[string][]byte{}
	var batch []*v2.Message
	for i, n := range sizes {
		body := make([]byte, n)
		if _, err := rand.Read(body); err != nil {
			t.Fatal(err)
		}
		m := message(topic, string(body), "T")
		k := string(rune('a' + i))
		m.UserProperties = map[string]string{"n": k}
		want[k] = body
		batch = append(batch, m)
	}
	if r := f.send("p@1", batch...); len(r.GetEntries()) != len(sizes) {
		t.Fatalf("send: %v", r.GetStatus())
	}
	got := f.receiveN("c@1", simpleReceive(group, topic, 2*time.Second), len(sizes), 10)
	for _, m := range got {
		k := m.GetUserProperties()["n"]
		if !bytes.Equal(m.GetBody(), want[k]) {
			t.Fatalf("message %s: %d bytes back, %d sent, equal %v", k, len(m.GetBody()), len(want[k]), bytes.Equal(m.GetBody(), want[k]))
		}
		delete(want, k)
	}
	if len(want) != 0 {
		t.Fatalf("%d messages not received", len(want))
	}
}
