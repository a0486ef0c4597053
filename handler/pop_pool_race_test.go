package handler_test

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// poolBody is message i of topic: its name and index, then filler sized
// by the index (up to 300 KB in "Big": records past the read buffer's
// guess and past what the pool keeps).
func poolBody(topic string, i int) []byte {
	head := fmt.Sprintf("%s-%d-", topic, i)
	n := 10 + i%7
	if topic == "Big" {
		n = 1000 + (i*37_000)%300_000
	}
	return append([]byte(head), bytes.Repeat([]byte{byte('a' + i%26)}, n)...)
}

// TestPopReadBuffersShared runs POPs of six connections at once over two
// topics, one of small messages and one of messages up to 300 KB, so the
// pooled read buffers pass between POPs of different sizes: every message
// comes back once per group, with its own body and a POP_CK that acks it
// (run with -race).
func TestPopReadBuffersShared(t *testing.T) {
	h := startHarness(t, nil)
	const perTopic = 120
	topics := []string{"Small", "Big"}
	c := h.dial()
	for _, topic := range topics {
		h.createTopic(topic, 3)
		for i := range perTopic {
			resp := call(t, c, sendReq(topic, int32(i%3), poolBody(topic, i), sendOpts{}))
			require.Equal(t, codec.Success, resp.Code, resp.Remark)
		}
	}
	var mu sync.Mutex
	got := map[string]int{}
	var errs []error
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for w := range 6 {
		conn := h.dial()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := 0; round < 200; round++ {
				topic := topics[(w+round)%2]
				mu.Lock()
				done := len(got) == 2*perTopic
				mu.Unlock()
				if done {
					return
				}
				resp, err := conn.Invoke(context.Background(), popArgs{group: "G", topic: topic, queueID: -1, max: 32, invisible: 60_000}.request())
				if err != nil {
					fail(err)
					return
				}
				if resp.Code == codec.PollingTimeout {
					continue
				}
				if resp.Code != codec.Success {
					fail(fmt.Errorf("pop %s: %d %s", topic, resp.Code, resp.Remark))
					return
				}
				msgs, err := codec.DecodeMessages(resp.Body)
				if err != nil {
					fail(err)
					return
				}
				for _, m := range msgs {
					parts := bytes.SplitN(m.Body, []byte("-"), 3)
					i, _ := strconv.Atoi(string(parts[min(1, len(parts)-1)]))
					if m.Topic != topic || !bytes.Equal(m.Body, poolBody(topic, i)) || m.QueueID != int32(i%3) {
						fail(fmt.Errorf("pop %s: message %q (topic %s queue %d) is not one sent", topic, m.Body[:min(len(m.Body), 40)], m.Topic, m.QueueID))
						return
					}
					ck, ok := m.Property(codec.PropertyPopCK)
					ei, err := codec.ParseExtraInfo(ck)
					if !ok || err != nil || ei.QueueOffset != m.QueueOffset || ei.QueueID != m.QueueID {
						fail(fmt.Errorf("pop %s: POP_CK %q of offset %d: %v", topic, ck, m.QueueOffset, err))
						return
					}
					ackH := codec.AckMessageRequestHeader{ConsumerGroup: "G", Topic: topic, QueueID: ei.QueueID,
						Offset: ei.QueueOffset, ExtraInfo: ck, BrokerName: ei.BrokerName}
					req := codec.NewRequest(codec.RequestAckMessage, 0, nil, nil)
					ackH.Encode(req)
					if r, err := conn.Invoke(context.Background(), req); err != nil || r.Code != codec.Success {
						fail(fmt.Errorf("ack %s %d: %v %v", topic, ei.QueueOffset, err, r))
						return
					}
					mu.Lock()
					got[topic+"/"+strconv.Itoa(i)]++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	require.Empty(t, errs)
	require.Len(t, got, 2*perTopic)
	for k, n := range got {
		require.Equal(t, 1, n, "%s delivered %d times", k, n)
	}
}
