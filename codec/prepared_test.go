package codec

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// A prepared frame patched with an opaque decodes to the same command as
// the frame AppendFrame builds with that opaque, byte for byte.
func TestPreparedFramePatchedEqualsEncoded(t *testing.T) {
	c := NewRequest(RequestAckMessage, 0, nil, nil)
	AckMessageRequestHeader{ConsumerGroup: "G", Topic: "T", QueueID: 3, Offset: 41,
		ExtraInfo: "0 1700000000000 60000 0 0 popshim-a 3 41"}.Encode(c)
	c.Remark = `"opaque":1000000000 in a remark`
	c.Body = []byte("body")
	c.Opaque = 7
	frame, at := AppendPreparedFrame([]byte("prefix"), c)
	require.Equal(t, int32(7), c.Opaque, "c untouched")
	frame = frame[len("prefix"):]
	for _, op := range []int32{MinPreparedOpaque, 1_234_567_890, math.MaxInt32} {
		buf := append([]byte(nil), frame...)
		PatchOpaque(buf, at, op)
		want := *c
		want.Opaque = op
		require.Equal(t, AppendFrame(nil, &want), buf, "opaque %d", op)
		got, err := DecodeFrame(buf)
		require.NoError(t, err)
		require.Equal(t, op, got.Opaque)
		require.Equal(t, c.ExtFields, got.ExtMap())
	}
	require.Panics(t, func() { PatchOpaque(append([]byte(nil), frame...), at, 5) })
}
