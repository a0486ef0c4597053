package bench

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/remoting/tlstest"
)

// checkHandshake asserts that every client did what a v5 client does
// before its first data call (QueryRoute, Telemetry with Settings,
// Heartbeat; QueryRoute perhaps retried), that data calls came only after it, and that it said
// goodbye (NotifyClientTermination) last.
func checkHandshake(t *testing.T, order map[string][]string, clients int, data string) {
	t.Helper()
	withData := 0
	for id, rpcs := range order {
		for len(rpcs) > 1 && rpcs[0] == "QueryRoute" && rpcs[1] == "QueryRoute" {
			rpcs = rpcs[1:] // retried while the route was not found
		}
		require.GreaterOrEqual(t, len(rpcs), 5, "%s: %v", id, rpcs)
		require.Equal(t, []string{"QueryRoute", "Telemetry", "Settings", "Heartbeat"}, rpcs[:4], "%s", id)
		require.Equal(t, "NotifyClientTermination", rpcs[len(rpcs)-1], "%s: %v", id, rpcs)
		for _, r := range rpcs[4 : len(rpcs)-1] {
			require.Contains(t, []string{"SendMessage", "ReceiveMessage", "AckMessage"}, r, "%s", id)
		}
		if slices.Contains(rpcs, data) {
			withData++
		}
	}
	require.Equal(t, clients, withData, "clients that made %s calls: %v", data, order)
}

func TestGRPCSendLoopback(t *testing.T) {
	s := startV5Server(t, nil)
	s.notFound = 3 // a proxy that does not know the route yet: QueryRoute is retried
	dir := t.TempDir()
	var out bytes.Buffer
	o := Options{Addr: s.addr, Topic: "T", Conns: 2, Inflight: 4, Duration: time.Second, Interval: 200 * time.Millisecond,
		Label: "fake", Round: 2, Out: &out, JSON: filepath.Join(dir, "r.json"), Plot: filepath.Join(dir, "r.svg")}
	r, err := RunGRPCSend(context.Background(), o)
	require.NoError(t, err, out.String())
	order, missing, stored, _, _, _, terminated := s.snapshot()
	require.Empty(t, missing)
	checkHandshake(t, order, 2, "SendMessage")
	require.Equal(t, 2, terminated)

	send, ok := r.SeriesByName("send")
	require.True(t, ok)
	require.Positive(t, send.OK)
	require.EqualValues(t, stored, send.OK, "every SendMessage answered OK is stored once")
	require.Zero(t, send.Errors+send.Busy)
	require.Equal(t, "grpc-send", r.Mode)
	require.Equal(t, 32, r.Config["ack_batch"])

	back, err := ReadReport(o.JSON)
	require.NoError(t, err)
	require.Equal(t, "fake", back.Label)
	require.Equal(t, 2, back.Round)
	require.Contains(t, out.String(), "send")
}

// Non-OK statuses are counted by code: TOO_MANY_REQUESTS as SYSTEM_BUSY,
// anything else by its v2 number.
func TestGRPCSendCountsStatuses(t *testing.T) {
	s := startV5Server(t, nil)
	n := 0
	s.hook = func(rpc, _ string) error {
		if rpc != "SendMessage" {
			return nil
		}
		n++ // under s.mu
		if n%3 == 0 {
			return errors.New("every third send fails")
		}
		return nil
	}
	var out bytes.Buffer
	o := Options{Addr: s.addr, Topic: "T", Conns: 1, Inflight: 2, Duration: time.Second, Out: &out}
	r, err := RunGRPCSend(context.Background(), o)
	require.NoError(t, err, out.String())
	send, _ := r.SeriesByName("send")
	require.Positive(t, send.Errors)
	require.Equal(t, send.Errors, send.Codes["50001"], "%v", send.Codes)
	_, _, stored, _, _, _, _ := s.snapshot()
	require.EqualValues(t, stored, send.OK)
}

func TestGRPCReceiveLoopback(t *testing.T) {
	s := startV5Server(t, nil)
	var out bytes.Buffer
	o := Options{Addr: s.addr, Topic: "T", Group: "G", Conns: 2, Inflight: 3, Duration: 60 * time.Second,
		Interval: 200 * time.Millisecond, Messages: 500, ProduceBatch: 8, InvisibleTime: 30 * time.Second, Out: &out,
		GRPC: GRPCOptions{ReceiveBatch: 16, AckBatch: 5, LongPolling: time.Second}}
	r, err := RunGRPCReceive(context.Background(), o)
	require.NoError(t, err, out.String())
	require.True(t, r.Exhausted, "the run ends when every message sent was acked")
	require.Equal(t, 500, r.Prepare.Produced)

	order, missing, stored, acked, inflight, ackCalls, terminated := s.snapshot()
	require.Empty(t, missing)
	require.Equal(t, 500, stored)
	require.Equal(t, 500, acked, "every message acked once")
	require.Zero(t, inflight)
	require.Equal(t, 4, terminated, "two producers and two consumers")
	consumers := map[string][]string{}
	for id, rpcs := range order {
		if slices.Contains(rpcs, "ReceiveMessage") {
			consumers[id] = rpcs
			require.NotContains(t, rpcs, "SendMessage", "a client is a producer or a consumer")
		}
	}
	checkHandshake(t, consumers, 2, "AckMessage")

	rs, _ := r.SeriesByName("receive")
	ack, _ := r.SeriesByName("ack")
	done, _ := r.SeriesByName("acked")
	require.EqualValues(t, 500, done.OK)
	require.EqualValues(t, ackCalls, ack.OK)
	require.GreaterOrEqual(t, ack.OK, int64(100), "at most 5 entries per AckMessage")
	require.Positive(t, rs.OK)
	require.Zero(t, rs.Errors+ack.Errors+done.Errors+rs.Busy)
	require.GreaterOrEqual(t, done.Latency.P50, rs.Latency.P50/2, "a cycle includes its receive")
}

// The run ends at its duration with messages left, and the slots' long
// polls do not outlive it.
func TestGRPCReceiveStopsAtDuration(t *testing.T) {
	s := startV5Server(t, nil)
	s.hook = func(rpc, _ string) error {
		if rpc == "AckMessage" {
			time.Sleep(20 * time.Millisecond) // a slow broker: 3 slots ack far fewer than 2,000 in the run
		}
		return nil
	}
	var out bytes.Buffer
	o := Options{Addr: s.addr, Topic: "T", Group: "G", Conns: 1, Inflight: 3, Duration: 300 * time.Millisecond,
		Messages: 2000, ProduceBatch: 32, InvisibleTime: 30 * time.Second, Out: &out,
		GRPC: GRPCOptions{ReceiveBatch: 1, LongPolling: 30 * time.Second}}
	r, err := RunGRPCReceive(context.Background(), o)
	require.NoError(t, err, out.String())
	require.False(t, r.Exhausted)
	done, _ := r.SeriesByName("acked")
	_, _, _, acked, _, _, _ := s.snapshot()
	require.EqualValues(t, acked, done.OK)
	require.Less(t, acked, 2000)
}

func TestGRPCOverTLS(t *testing.T) {
	m := tlstest.New(t)
	s := startV5Server(t, m.ServerConfig(tls.NoClientCert))
	var out bytes.Buffer
	o := Options{Addr: s.addr, Topic: "T", Conns: 1, Inflight: 2, Duration: 500 * time.Millisecond, Out: &out, TLS: true}
	r, err := RunGRPCSend(context.Background(), o)
	require.NoError(t, err, out.String())
	send, _ := r.SeriesByName("send")
	require.Positive(t, send.OK)
	require.Equal(t, true, r.Config["tls"])

	o.TLS, o.GRPC.RouteWait = false, 500*time.Millisecond
	_, err = RunGRPCSend(context.Background(), o)
	require.Error(t, err, "plaintext against a TLS endpoint")
	require.Contains(t, err.Error(), "QueryRoute")
}

func TestGRPCRouteWaitEnds(t *testing.T) {
	s := startV5Server(t, nil)
	s.notFound = 1 << 30
	o := Options{Addr: s.addr, Topic: "T", Conns: 1, Inflight: 1, Duration: time.Second, GRPC: GRPCOptions{RouteWait: 300 * time.Millisecond}}
	_, err := RunGRPCSend(context.Background(), o)
	var se *statusError
	require.ErrorAs(t, err, &se)
	require.Equal(t, v2.Code_TOPIC_NOT_FOUND, se.code)
}

func TestOutcome(t *testing.T) {
	for _, c := range []struct {
		err       error
		st        *v2.Status
		code      int32
		cancelled bool
	}{
		{nil, &v2.Status{Code: v2.Code_OK}, codec.Success, false},
		{nil, &v2.Status{Code: v2.Code_TOO_MANY_REQUESTS}, codec.SystemBusy, false},
		{nil, &v2.Status{Code: v2.Code_MESSAGE_NOT_FOUND}, 40401, false},
		{nil, nil, int32(v2.Code_INTERNAL_SERVER_ERROR), false},
		{status.Error(codes.Unavailable, "gone"), nil, codeTransport, false},
		{status.Error(codes.Canceled, "stop"), nil, codeTransport, true},
		{context.Canceled, nil, codeTransport, true},
	} {
		code, cancelled := outcome(c.err, c.st)
		require.Equal(t, c.code, code, "%v %v", c.err, c.st)
		require.Equal(t, c.cancelled, cancelled, "%v %v", c.err, c.st)
	}
}

func TestMsgIDs(t *testing.T) {
	ids := newMsgIDs()
	seen := map[string]bool{}
	for range 1000 {
		id := ids.next()
		require.Len(t, id, 34)
		require.True(t, strings.HasPrefix(id, "01"))
		require.Equal(t, strings.ToUpper(id), id)
		require.False(t, seen[id])
		seen[id] = true
	}
}

func TestEndpointsOf(t *testing.T) {
	e, err := endpointsOf("127.0.0.1:8081")
	require.NoError(t, err)
	require.Equal(t, v2.AddressScheme_IPv4, e.GetScheme())
	require.Equal(t, int32(8081), e.GetAddresses()[0].GetPort())
	e, err = endpointsOf("[::1]:9")
	require.NoError(t, err)
	require.Equal(t, v2.AddressScheme_IPv6, e.GetScheme())
	e, err = endpointsOf("localhost:9")
	require.NoError(t, err)
	require.Equal(t, v2.AddressScheme_DOMAIN_NAME, e.GetScheme())
	_, err = endpointsOf("localhost")
	require.Error(t, err)
	_, err = endpointsOf("h:0")
	require.Error(t, err)
}
