package remoting

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/popshim/popshim/codec"
)

// BenchmarkObserveRPC is the metrics cost of one ACK reply: a
// rocketmq_rpc_latency observation for a label set seen before.
func BenchmarkObserveRPC(b *testing.B) {
	m, err := NewMetrics(prometheus.NewRegistry(), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		m.observeRPC(codec.RequestAckMessage, codec.Success, false, resultSuccess, 3*time.Millisecond)
	}
}
