package remoting

import (
	"context"
	"crypto/tls"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/remoting/tlstest"
)

// BenchmarkEchoPlainVsTLS compares pipelined echo round trips (4 clients ×
// 64 in flight, 64-byte bodies) over plaintext and over TLS, against one
// permissive server, in interleaved rounds so both kinds see the same
// machine. Besides req/s it reports the process CPU time per request
// (cpu-µs/req, client and server together: both ends do the crypto), which
// a loaded machine disturbs less than wall-clock rates.
//
//	go test -run '^$' -bench EchoPlainVsTLS -benchtime 200000x ./remoting
func BenchmarkEchoPlainVsTLS(b *testing.B) {
	m := tlstest.New(b)
	s := startServer(b, echoRouter(), ServerOptions{EventLoops: 2, TLS: m.ServerConfig(tls.NoClientCert), TLSMode: TLSPermissive})
	for round := 1; round <= 3; round++ {
		for _, kind := range []string{"plain", "tls"} {
			b.Run(fmt.Sprintf("%s/round=%d", kind, round), func(b *testing.B) {
				var cfg *tls.Config
				if kind == "tls" {
					cfg = m.ClientConfig(false)
				}
				benchEchoClients(b, s, cfg, 4, 64)
			})
		}
	}
}

// benchEchoClients runs b.N echoes over conns new clients (TLS when cfg is
// set), window requests in flight on each.
func benchEchoClients(b *testing.B, s *Server, cfg *tls.Config, conns, window int) {
	clients := make([]*client.Conn, conns)
	for i := range clients {
		c, err := client.DialContext(context.Background(), s.Addr().String(), client.Options{TLS: cfg})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		clients[i] = c
	}
	cpu0 := cpuTime()
	b.ResetTimer()
	start := time.Now()
	pipelinedEchoes(b, clients, window)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/req")
}

// cpuTime is the user plus system CPU time of this process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
