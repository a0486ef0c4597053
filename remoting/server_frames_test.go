package remoting

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// Frames written one byte at a time, and every split point of a frame, are
// decoded exactly as a whole write.
func TestFramesSplitAtEveryByte(t *testing.T) {
	s := startServer(t, echoRouter(), ServerOptions{})

	t.Run("byte at a time, pipelined", func(t *testing.T) {
		nc := dialRaw(t, s)
		var stream []byte
		const frames = 12
		for i := range frames {
			req := codec.NewRequest(codeEcho, int32(100+i), map[string]string{"k": fmt.Sprint(i)}, fmt.Appendf(nil, "body-%d", i))
			if i%3 == 2 {
				stream = codec.AppendFrameBinary(stream, req)
			} else {
				stream = codec.AppendFrame(stream, req)
			}
		}
		go func() {
			for i := range stream {
				if _, err := nc.Write(stream[i : i+1]); err != nil {
					return
				}
			}
		}()
		for i := range frames {
			resp := readFrame(t, nc)
			require.Equal(t, int32(100+i), resp.Opaque)
			require.Equal(t, fmt.Sprintf("body-%d", i), string(resp.Body))
		}
	})

	t.Run("every split point", func(t *testing.T) {
		nc := dialRaw(t, s)
		req := codec.NewRequest(codeEcho, 0, map[string]string{"topic": "T"}, []byte("split"))
		for k := 1; k < len(codec.AppendFrame(nil, req)); k++ {
			req.Opaque = int32(k)
			frame := codec.AppendFrame(nil, req)
			_, err := nc.Write(frame[:k])
			require.NoError(t, err)
			time.Sleep(100 * time.Microsecond) // makes a separate read likely; correctness does not depend on it
			_, err = nc.Write(frame[k:])
			require.NoError(t, err)
			resp := readFrame(t, nc)
			require.Equal(t, int32(k), resp.Opaque)
			require.Equal(t, "split", string(resp.Body))
		}
	})
}

// Garbage, a too-large length and an unknown header type each close only
// their own connection; a healthy client keeps working throughout.
func TestMalformedFrameClosesOnlyThatConnection(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg, nil)
	require.NoError(t, err)
	s := startServer(t, echoRouter(), ServerOptions{Metrics: m})
	good := dialClient(t, s)
	ask := func() {
		resp, err := good.Invoke(context.Background(), codec.NewRequest(codeEcho, 0, nil, []byte("alive")))
		require.NoError(t, err)
		require.Equal(t, "alive", string(resp.Body))
	}
	ask()

	badHeader := codec.AppendFrame(nil, codec.NewRequest(codeEcho, 1, nil, nil))
	badHeader[4] = 7 // serialize type 7 does not exist

	cases := map[string][]byte{
		"length below 4":     {0, 0, 0, 2, 0xde, 0xad, 0xbe, 0xef},
		"negative length":    {0xff, 0xff, 0xff, 0xf0, 1, 2, 3, 4},
		"too large":          binary.BigEndian.AppendUint32(nil, codec.DefaultMaxFrame),
		"unknown serializer": badHeader,
		"header past frame":  {0, 0, 0, 6, 0, 0, 0, 9, 'x', 'y'},
	}
	for name, bad := range cases {
		t.Run(name, func(t *testing.T) {
			nc := dialRaw(t, s)
			// A good frame first: it must be answered before the bad one closes the conn.
			_, err := nc.Write(codec.AppendFrame(nil, codec.NewRequest(codeEcho, 77, nil, []byte("first"))))
			require.NoError(t, err)
			require.Equal(t, int32(77), readFrame(t, nc).Opaque)
			_, err = nc.Write(bad)
			require.NoError(t, err)
			expectClosed(t, nc)
			ask()
		})
	}
	require.Equal(t, float64(len(cases)), sumCounter(t, reg, "popshim_remoting_malformed_frames_total"))
}

// A server with a small max frame rejects a frame above it.
func TestMaxFrameOption(t *testing.T) {
	s := startServer(t, echoRouter(), ServerOptions{MaxFrameBytes: 200})
	nc := dialRaw(t, s)
	small := codec.AppendFrame(nil, codec.NewRequest(codeEcho, 1, nil, nil))
	require.LessOrEqual(t, len(small), 200)
	_, err := nc.Write(small)
	require.NoError(t, err)
	require.Equal(t, int32(1), readFrame(t, nc).Opaque)
	big := codec.AppendFrame(nil, codec.NewRequest(codeEcho, 2, nil, make([]byte, 200)))
	_, err = nc.Write(big)
	require.NoError(t, err)
	expectClosed(t, nc)
}

// A ROCKETMQ binary header request is answered with a JSON header.
func TestBinaryHeaderRequestGetsJSONReply(t *testing.T) {
	s := startServer(t, echoRouter(), ServerOptions{})
	nc := dialRaw(t, s)
	req := codec.NewRequest(codeEcho, 99, map[string]string{"topic": "TopicTest"}, []byte("bin"))
	_, err := nc.Write(codec.AppendFrameBinary(nil, req))
	require.NoError(t, err)
	raw, err := readRawFrame(nc)
	require.NoError(t, err)
	require.Equal(t, codec.SerializeJSON, raw[4], "serialize type of the reply")
	require.Equal(t, byte('{'), raw[8])
	resp, err := codec.DecodeFrame(raw)
	require.NoError(t, err)
	require.Equal(t, int32(99), resp.Opaque)
	require.Equal(t, "bin", string(resp.Body))
}
