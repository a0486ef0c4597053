package bench

import (
	"bytes"
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A broker that accepts connections and never reads them (its read budget
// full, say) must not hold a produce run past its duration and drain: the
// first requests used to be issued by the caller itself, which then waited
// for queue space for ever and never reached its deadline or its signals.
// Here 4 MiB bodies fill the sockets and the client's queues at once; the
// run returns (its connections closed after the drain), not hangs.
func TestProduceAgainstStalledBrokerEnds(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer func() { _ = ln.Close() }()
	var mu sync.Mutex
	var held []net.Conn // never read
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			_ = c.Close()
		}
	}()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	done := make(chan error, 1)
	go func() {
		_, err := RunProduce(context.Background(), Options{Addr: ln.Addr().String(), Conns: 2, Inflight: 8,
			Duration: 200 * time.Millisecond, Queues: 1, Topic: "stall", BodySize: 4 << 20, Out: &bytes.Buffer{}})
		done <- err
	}()
	select {
	case err := <-done:
		t.Logf("the run ended: %v", err) // an error or none: only the end matters here
	case <-time.After(time.Minute):
		t.Fatal("the produce run against a broker that reads nothing did not end")
	}
}
