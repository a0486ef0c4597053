package grpcserver

import (
	"context"
	"crypto/tls"
	"net"
	"testing"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// Every connection is counted open once and closed once, over plaintext
// and TLS on a permissive port, and so is one that grpc-go refuses after
// the handshake (a byte that is not its preface, then gone): the gauge
// returns to 0.
func TestConnectionsCountedOnceEach(t *testing.T) {
	m, err := NewMetrics(prometheus.NewRegistry(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.TLSMode, cfg.TLSConfig, cfg.Metrics = TLSPermissive, selfSigned(t), m
	_, addr := startServer(t, cfg)
	gauge := func() float64 { return testutil.ToFloat64(m.conns) }
	opened := func() float64 { return testutil.ToFloat64(m.opened) }

	var ccs []*grpc.ClientConn
	for i, creds := range []credentials.TransportCredentials{insecure.NewCredentials(),
		credentials.NewTLS(&tls.Config{InsecureSkipVerify: true})} {
		cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
		if err != nil {
			t.Fatal(err)
		}
		ccs = append(ccs, cc)
		ctx, cancel := context.WithTimeout(withClient(context.Background(), "conn@1"), callBound)
		r, err := v2.NewMessagingServiceClient(cc).NotifyClientTermination(ctx, &v2.NotifyClientTerminationRequest{})
		cancel()
		if err != nil || r.GetStatus().GetCode() != v2.Code_OK {
			t.Fatalf("connection %d: %v %v", i, r, err)
		}
		if g := gauge(); g != float64(i+1) {
			t.Fatalf("after connection %d: %v open, want %d", i, g, i+1)
		}
	}
	// A plaintext byte that is not a preface, then a close: the handshake
	// passes (permissive), grpc-go refuses the preface and closes.
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = raw.Write([]byte("x"))
	_ = raw.Close()
	for _, cc := range ccs {
		_ = cc.Close()
	}
	if !waitFor(500, func() bool { return gauge() == 0 }) {
		t.Fatalf("%v connections still counted open", gauge())
	}
	if o := opened(); o < 2 || o > 3 {
		t.Errorf("%v connections counted opened, want 2 (3 when the refused one's preface read started)", o)
	}
}
