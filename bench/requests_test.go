package bench

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// Every prepared ACK frame, patched with an opaque, is byte-identical to
// the frame ackRequest encodes with that opaque.
func TestPrepareAckFramesMatchAckRequest(t *testing.T) {
	var rs []client.Receipt
	for i := range 50 {
		rs = append(rs, client.Receipt{Topic: "bench_t", QueueID: int32(i % 8), Offset: int64(i * 1000),
			ExtraInfo: fmt.Sprintf("%d 1700000000000 300000 0 0 popshim-a %d %d", i, i%8, i*1000)})
	}
	f := prepareAckFrames("bench_group", rs, (&Options{}).sign)
	for i := range rs {
		frame, at := f.frame(i)
		got := append([]byte(nil), frame...)
		opaque := codec.MinPreparedOpaque + int32(i)
		codec.PatchOpaque(got, at, opaque)
		want := ackRequest("bench_group", &rs[i])
		want.Opaque = opaque
		require.Equal(t, codec.AppendFrame(nil, want), got, "receipt %d", i)
	}
	require.Empty(t, prepareAckFrames("g", nil, (&Options{}).sign).ends)
}

// TestKeysProperty: --keys adds one KEYS property of n space-separated keys
// after UNIQ_KEY.
func TestKeysProperty(t *testing.T) {
	c := sendRequest("g", "T", 0, 4, 26, []byte("b"), keysProperty(26, 3))
	h, err := codec.DecodeSendMessageRequestHeaderV2(c.ExtFields)
	require.NoError(t, err)
	props := codec.DecodeProperties(h.Properties)
	require.Equal(t, "order-1a-0 order-1a-1 order-1a-2", props[codec.PropertyKeys])
	require.Equal(t, "bench1a", props[codec.PropertyUniqClientMessageIDKeyIdx])
	require.Empty(t, keysProperty(26, 0))
}
