package bench

import (
	"bytes"
	"context"
	"net"
	"os"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/popshim/popshim/grpcserver"
)

// The floor server answers a v5 producer's start-up and every send OK,
// and stops when its context ends, leaving no goroutine behind.
func TestGRPCFloorServesSend(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- ServeGRPCFloor(ctx, lis) }()

	var out bytes.Buffer
	o := Options{Addr: lis.Addr().String(), Topic: "t1", Conns: 2, Inflight: 4, Duration: 500 * time.Millisecond, Out: &out,
		ServerPIDs: []int{os.Getpid()}}
	r, err := RunGRPCSend(context.Background(), o)
	require.NoError(t, err, out.String())
	send, ok := r.SeriesByName("send")
	require.True(t, ok)
	require.Positive(t, send.OK)
	require.Zero(t, send.Errors+send.Busy, "%v", send.Codes)
	// The cost line counts the sends (it said 0 messages for gRPC modes).
	require.NotNil(t, r.Cost)
	require.Equal(t, send.OK, r.Cost.Ops)
	require.Positive(t, r.Cost.CPUMicrosPerOp)

	cancel()
	select {
	case err := <-served:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("ServeGRPCFloor did not return after its context ended")
	}
	goleak.VerifyNone(t, leakIgnores...)
}

// A context that has already ended stops the server before it serves;
// the listener is closed either way.
func TestGRPCFloorStopsAtOnce(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, ServeGRPCFloor(ctx, lis))
	_, err = lis.Accept()
	require.Error(t, err, "the listener is closed")
}

// The floor's server options are popshim's endpoint's defaults, so the
// two differ in what runs per call, not in how grpc-go is set up.
func TestGRPCFloorOptionsMatchEndpoint(t *testing.T) {
	c := grpcserver.DefaultConfig()
	require.EqualValues(t, c.StreamWorkers, floorStreamWorkers)
	require.EqualValues(t, c.MaxConcurrentStreams, floorMaxConcurrentStreams)
	require.Equal(t, c.MaxRecvMsgBytes, floorMaxRecvMsgBytes)
	require.Equal(t, c.IdleTimeout, floorIdleTimeout)
	require.Equal(t, c.KeepaliveTime, floorKeepaliveTime)
	require.Equal(t, c.KeepaliveTimeout, floorKeepaliveTimeout)
	require.Equal(t, c.MinClientPingInterval, floorMinClientPingInterval)
}

// Each message gets its own entry: status OK, its id, offset 0; the route
// is 8 writable queues of the master at the server's own address.
func TestGRPCFloorAnswers(t *testing.T) {
	self, err := endpointsOf("127.0.0.1:9")
	require.NoError(t, err)
	s := &floorService{self: self}
	m1, m2 := newV5Message("t1", []byte("a"), "h"), newV5Message("t1", []byte("b"), "h")
	ids := newMsgIDs()
	stamp(m1, ids)
	stamp(m2, ids)
	resp, err := s.SendMessage(context.Background(), &v2.SendMessageRequest{Messages: []*v2.Message{m1, m2}})
	require.NoError(t, err)
	require.Equal(t, v2.Code_OK, resp.GetStatus().GetCode())
	require.Len(t, resp.GetEntries(), 2)
	for i, m := range []*v2.Message{m1, m2} {
		e := resp.GetEntries()[i]
		require.Equal(t, v2.Code_OK, e.GetStatus().GetCode())
		require.Equal(t, m.GetSystemProperties().GetMessageId(), e.GetMessageId())
		require.Zero(t, e.GetOffset())
	}

	route, err := s.QueryRoute(context.Background(), &v2.QueryRouteRequest{Topic: &v2.Resource{Name: "t1"}})
	require.NoError(t, err)
	require.Len(t, route.GetMessageQueues(), 8)
	for _, q := range route.GetMessageQueues() {
		require.Equal(t, v2.Permission_READ_WRITE, q.GetPermission())
		require.Zero(t, q.GetBroker().GetId())
		require.Equal(t, "t1", q.GetTopic().GetName())
		require.Equal(t, int32(9), q.GetBroker().GetEndpoints().GetAddresses()[0].GetPort())
	}
}
