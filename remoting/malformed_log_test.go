package remoting

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/remoting/logtest"
)

// TestMalformedFrameLogIsRateLimited: 40 connections sending garbage are all
// closed, but at most malformedLogBurst lines per second reach the log.
func TestMalformedFrameLogIsRateLimited(t *testing.T) {
	var out logtest.Buffer
	s := NewServer(ServerOptions{Addr: "127.0.0.1:0", EventLoops: 1}, NewRouter(), zerolog.New(&out))
	require.NoError(t, s.Start())
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, s.Stop(ctx))
	}()
	start := time.Now()
	const n = 40
	for range n {
		nc := dialRaw(t, s)
		_, err := nc.Write([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0})
		require.NoError(t, err)
		expectClosed(t, nc)
	}
	lines := strings.Count(out.String(), "malformed frame")
	seconds := int(time.Since(start)/time.Second) + 1
	require.Positive(t, lines, "malformed frames are still logged")
	require.LessOrEqual(t, lines, malformedLogBurst*(seconds+1), "%d lines for %d malformed frames in %ds", lines, n, seconds)
}
