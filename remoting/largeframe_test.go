package remoting

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// Large frames keep their bytes whether or not the budget is on: three
// pipelined 300 KiB echoes come back intact, next to small ones.
func TestLargeFramesEchoIntact(t *testing.T) {
	for _, limit := range []int64{0, -1} {
		s := startServer(t, echoRouter(), ServerOptions{MaxReadBytes: limit})
		c := dialClient(t, s)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		type call struct {
			body []byte
			done <-chan *codec.Command
		}
		var calls []call
		for i := range 6 {
			n := 300<<10 + i
			if i%2 == 1 {
				n = 10 + i
			}
			body := bytes.Repeat([]byte{byte('a' + i)}, n)
			done := make(chan *codec.Command, 1)
			go func() {
				resp, err := c.Invoke(ctx, codec.NewRequest(codeEcho, 0, nil, body))
				if err != nil {
					resp = nil
				}
				done <- resp
			}()
			calls = append(calls, call{body, done})
		}
		for _, cl := range calls {
			resp := <-cl.done
			require.NotNil(t, resp)
			require.Equal(t, cl.body, resp.Body)
		}
		cancel()
		reserved, _, _, _ := s.readStats()
		require.Zero(t, reserved)
	}
}

// decodeOwned decodes as DecodeFrame does, keeps the body in the frame's
// buffer and leaves the frame's bytes unchanged.
func TestDecodeOwned(t *testing.T) {
	req := codec.NewRequest(codeEcho, 7, map[string]string{"topic": "t", "queueId": "3"}, bytes.Repeat([]byte("b"), 1000))
	for _, frame := range [][]byte{codec.AppendFrame(nil, req), codec.AppendFrameBinary(nil, req)} {
		want, err := codec.DecodeFrame(frame)
		require.NoError(t, err)
		orig := bytes.Clone(frame)
		got, err := decodeOwned(frame)
		require.NoError(t, err)
		require.Equal(t, want, got)
		require.Equal(t, orig, frame)
		require.Same(t, &frame[len(frame)-1], &got.Body[len(got.Body)-1], "the body is the frame's tail")
		require.Equal(t, len(got.Body), cap(got.Body))
	}
	empty := codec.AppendFrame(nil, codec.NewRequest(codeEcho, 1, nil, nil))
	got, err := decodeOwned(empty)
	require.NoError(t, err)
	require.Nil(t, got.Body)
	bad := bytes.Clone(empty)
	bad[7] = 0xFF
	_, err = decodeOwned(bad)
	require.ErrorIs(t, err, codec.ErrBadFrame)
}
