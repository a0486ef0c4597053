package broker_test

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/codec"
)

// Record buffers are pooled (recbuf.go): many concurrent SENDs of
// distinct bodies, single and batch, across the size classes and past the
// largest, both below and above the commit-log threshold, are each stored
// with their own bytes — no buffer is reused while the writer still needs
// it.
func TestSendPooledRecordsKeepTheirBytes(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicP", 4)
	sizes := []int{1, 300, 511, 700, 1500, 4000, 20_000, 70_000}
	body := func(g, i, size int) string {
		p := fmt.Sprintf("g%d-i%d-", g, i)
		return p + string(bytes.Repeat([]byte{byte('a' + (g+i)%26)}, max(0, size-len(p))))
	}
	const goroutines, perG = 8, 40
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*perG)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perG {
				q := int32(g % 4)
				var r broker.SendRequest
				if i%5 == 4 {
					r = batchReq(t, "TopicP", q, "", body(g, i, sizes[i%len(sizes)]), body(g, i+1000, sizes[(i+3)%len(sizes)]))
				} else {
					r = sendReq("TopicP", q, body(g, i, sizes[i%len(sizes)]), "")
				}
				done := make(chan error, 1)
				f.Broker.Send(r, func(_ broker.SendResult, err error) { done <- err })
				errs <- <-done
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("send: %v", err)
		}
	}
	want := map[string]bool{}
	for g := range goroutines {
		for i := range perG {
			want[body(g, i, sizes[i%len(sizes)])] = true
			if i%5 == 4 {
				want[body(g, i+1000, sizes[(i+3)%len(sizes)])] = true
			}
		}
	}
	got := 0
	for q := range int32(4) {
		recs, _, err := f.Store.ReadMessages("TopicP", q, 0, 1000, 64<<20)
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range recs {
			me, _, err := codec.DecodeMessage(rec)
			if err != nil {
				t.Fatalf("queue %d: %v", q, err)
			}
			m := me.Body
			if !want[string(m)] {
				t.Fatalf("queue %d: a stored body matches no sent one (%d bytes, starts %q)", q, len(m), m[:min(len(m), 24)])
			}
			delete(want, string(m))
			got++
		}
	}
	if len(want) != 0 {
		t.Fatalf("%d bodies stored, %d sent bodies missing", got, len(want))
	}
}
