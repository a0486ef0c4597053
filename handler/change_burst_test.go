package handler_test

// CHANGE bursts on the writer's bulk lane (batch.LaneBulk): ACKs overtake
// queued CHANGEs, and the at-least-once outcome of every message is still
// the one RocketMQ's KV path gives (broker/.../pop/PopConsumerService.java).

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
)

// replyLog records the order in which asynchronous replies arrive.
type replyLog struct {
	mu    sync.Mutex
	order []string // "ack:<body>" or "change:<body>"
	codes map[string]int32
	resps map[string]*codec.Command
	wg    sync.WaitGroup
}

func newReplyLog() *replyLog {
	return &replyLog{codes: map[string]int32{}, resps: map[string]*codec.Command{}}
}

func (l *replyLog) callback(name string) func(*codec.Command, error) {
	l.wg.Add(1)
	return func(resp *codec.Command, err error) {
		defer l.wg.Done()
		l.mu.Lock()
		defer l.mu.Unlock()
		l.order = append(l.order, name)
		if err != nil {
			l.codes[name] = -1
			return
		}
		l.codes[name], l.resps[name] = resp.Code, resp
	}
}

// TestCHG_BurstOvertakenByAcks: a burst of CHANGEs is queued on the bulk
// lane (2 per batch, slow store), then ACKs are sent behind it on the same
// connection. The ACKs overtake the queued CHANGEs, and still:
//   - role 0, acked only: never redelivered;
//   - role 1, changed only: redelivered exactly once;
//   - role 2, CHANGE and ACK of the same handle in flight together (the ACK
//     applied first): redelivered at most once, never twice;
//   - role 3, changed, then acked with the new handle from the CHANGE
//     reply: never redelivered.
func TestCHG_BurstOvertakenByAcks(t *testing.T) {
	h := startSlowHarness(t, 2*time.Millisecond, func(c *conf.Config) {
		c.BatchMaxBulkOps = 2
	})
	h.createTopic("T", 2)
	c := h.dial()
	const n = 320
	sendBatch(t, c, "T", 0, "q0", 0, n/2, "")
	sendBatch(t, c, "T", 1, "q1", 0, n/2, "")
	all := popAll(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 32, invisible: 60000}, n)
	require.Len(t, all, n)
	role := func(i int) int { return i % 4 }

	log := newReplyLog()
	for i, m := range all { // the burst
		if role(i) != 0 {
			require.NoError(t, c.InvokeAsync(changeReq("G", "T", m, 30000), log.callback("change:"+m.body())))
		}
	}
	for i, m := range all { // ACKs behind it
		if role(i) == 0 || role(i) == 2 {
			require.NoError(t, c.InvokeAsync(ackReq("G", "T", m), log.callback("ack:"+m.body())))
		}
	}
	log.wg.Wait()
	lastChange, firstAck := -1, len(log.order)
	for i, name := range log.order {
		if name[:4] == "ack:" {
			firstAck = min(firstAck, i)
		} else {
			lastChange = i
		}
	}
	require.Less(t, firstAck, lastChange, "no ACK overtook the CHANGE burst: the bulk lane was not exercised")
	for i, m := range all {
		for _, name := range []string{"change:" + m.body(), "ack:" + m.body()} {
			code, ok := log.codes[name]
			if !ok {
				continue
			}
			if role(i) == 2 && name[:4] == "chan" && code == codec.NoMessage {
				continue // the ACK applied first: the CHANGE found no lease and says so
			}
			require.Equal(t, codec.Success, code, name)
		}
	}
	for i, m := range all { // role 3: ACK the handle the CHANGE reply names
		if role(i) != 3 {
			continue
		}
		resp := log.resps["change:"+m.body()]
		ext, ok := resp.Ext("extraInfo")
		require.True(t, ok)
		nm := m
		nm.handle, nm.raw = mustParseExtraInfo(t, ext), ext
		require.Equal(t, codec.Success, ack(t, c, "G", "T", nm))
	}

	got := map[string]int{}
	for _, m := range redeliveries(t, h, "G", "T", 61*time.Second) {
		got[m.body()]++
	}
	for i, m := range all {
		switch k := got[m.body()]; role(i) {
		case 0:
			require.Zero(t, k, "%s was acked and came back", m.body())
		case 1:
			require.Equal(t, 1, k, "%s was changed and not acked: exactly one redelivery", m.body())
		case 2:
			require.LessOrEqual(t, k, 1, "%s: ACK racing CHANGE may redeliver once, never twice", m.body())
		case 3:
			require.Zero(t, k, "%s was acked with its changed handle and came back", m.body())
		}
	}
	require.Empty(t, bodies(redeliveries(t, h, "G", "T", 61*time.Second)), "nothing comes back a second time")
}

func mustParseExtraInfo(t *testing.T, s string) codec.ExtraInfo {
	t.Helper()
	ei, err := codec.ParseExtraInfo(s)
	require.NoError(t, err)
	return ei
}
