package bench

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/stack/stacktest"
)

// The gRPC modes against popshim's own endpoint (in process, real
// loopback, real RocksDB): the v5 handshake is accepted, every send is
// answered OK, and a receive run acks each message it sent exactly once.
func TestGRPCAgainstPopshim(t *testing.T) {
	st := stacktest.StartEdited(t, nil)
	require.NotEmpty(t, st.GRPCAddr())
	var out bytes.Buffer
	o := Options{Addr: st.GRPCAddr(), Conns: 2, Inflight: 4, Duration: time.Second, Out: &out, CreateTopic: true,
		GRPC: GRPCOptions{RemotingAddr: st.BrokerAddr()}}
	r, err := RunGRPCSend(context.Background(), o)
	require.NoError(t, err, out.String())
	send, _ := r.SeriesByName("send")
	require.Positive(t, send.OK)
	require.Zero(t, send.Errors+send.Busy, "%v", send.Codes)

	out.Reset()
	o.Duration, o.Messages, o.ProduceBatch, o.InvisibleTime = 60*time.Second, 2000, 16, 30*time.Second
	o.GRPC.ReceiveBatch, o.GRPC.AckBatch, o.GRPC.LongPolling = 32, 8, time.Second
	r, err = RunGRPCReceive(context.Background(), o)
	require.NoError(t, err, out.String())
	require.True(t, r.Exhausted, "the run ends when all 2000 are acked")
	done, _ := r.SeriesByName("acked")
	ack, _ := r.SeriesByName("ack")
	rs, _ := r.SeriesByName("receive")
	require.EqualValues(t, 2000, done.OK)
	require.Zero(t, done.Errors+ack.Errors+rs.Errors, "%v %v %v", done.Codes, ack.Codes, rs.Codes)
}
