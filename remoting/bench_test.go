package remoting

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// BenchmarkPipelinedEcho measures echo requests per second over loopback:
// conns clients, each keeping window requests in flight, 64-byte bodies.
//
//	go test -run '^$' -bench PipelinedEcho -benchtime 200000x ./remoting
func BenchmarkPipelinedEcho(b *testing.B) {
	for _, conns := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("conns=%d", conns), func(b *testing.B) {
			benchEcho(b, conns, 256)
		})
	}
}

func benchEcho(b *testing.B, conns, window int) {
	s := startServer(b, echoRouter(), ServerOptions{EventLoops: 2})
	clients := make([]*client.Conn, conns)
	for i := range clients {
		clients[i] = dialClient(b, s)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	pipelinedEchoes(b, clients, window)
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}

// pipelinedEchoes sends b.N echo requests (64-byte bodies) spread over
// clients, each keeping window in flight, and returns when all are
// answered; a failed or non-SUCCESS echo fails b. Timing is the caller's.
func pipelinedEchoes(b *testing.B, clients []*client.Conn, window int) {
	body := make([]byte, 64)
	var left atomic.Int64
	left.Store(int64(b.N))
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots := make(chan struct{}, window)
			var inflight sync.WaitGroup
			for left.Add(-1) >= 0 {
				slots <- struct{}{}
				inflight.Add(1)
				err := c.InvokeAsync(codec.NewRequest(codeEcho, 0, nil, body), func(resp *codec.Command, err error) {
					if err != nil || resp.Code != 0 {
						b.Errorf("echo failed: %v", err)
					}
					<-slots
					inflight.Done()
				})
				if err != nil {
					b.Error(err)
					inflight.Done()
					return
				}
			}
			inflight.Wait()
		}()
	}
	wg.Wait()
}
