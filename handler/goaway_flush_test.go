package handler_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// TestShutdownFlushesRepliesAfterDeadline: the shutdown deadline
// (--shutdown-timeout) runs out while the writer still drains a held batch;
// the SEND of that batch is durable and its SUCCESS reply still reaches the
// client, because the listeners always get minReplyFlush to write queued
// replies (found in a shutdown test: with a 100 ms flush timeout the
// replies were dropped).
func TestShutdownFlushesRepliesAfterDeadline(t *testing.T) {
	h, _, g, inflight := startHeldSend(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	closed := make(chan error, 1)
	go func() { closed <- h.st.Close(ctx) }()
	<-ctx.Done() // the whole shutdown budget is gone before the write completes
	g.open()
	r := inflight.wait(t)
	require.Equal(t, codec.Success, r.Code, "the durable SEND's reply was flushed: %s", r.Remark)
	select {
	case err := <-closed:
		_ = err // the writer's late completion may make Close report the budget; the reply is what counts
	case <-time.After(waitFor):
		t.Fatal("Close did not return")
	}
	h.restart()
	require.Equal(t, int64(2), maxOffsetRemote(t, h.dial(), "T"))
}
