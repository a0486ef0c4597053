package broker_test

import (
	"testing"

	"github.com/popshim/popshim/broker/brokertest"
)

// BenchmarkCoreAck measures ACKs through the core alone (no socket, no
// codec): one popped message re-acked b.N times, 64 in flight, through the
// real group-commit writer on a real store. The completion callback is
// one func value shared by every call, so allocs/op is what the core and
// the writer allocate per ACK (the writer's per-batch allocations shared
// out over the batch).
func BenchmarkCoreAck(b *testing.B) {
	f := brokertest.Start(b, nil, nil)
	createTopic(b, f, "TopicBench", 1)
	appendBodies(b, f, "TopicBench", 0, "m")
	_, ms := popMessages(b, f, popReq("GroupBench", "TopicBench", 1))
	r := ackReq("GroupBench", "TopicBench", ms[0])
	window := make(chan struct{}, 64)
	failed := make(chan error, 1)
	done := func(err error) {
		if err != nil {
			select {
			case failed <- err:
			default:
			}
		}
		<-window
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		window <- struct{}{}
		f.Broker.Ack(r, done)
	}
	for range cap(window) {
		window <- struct{}{}
	}
	b.StopTimer()
	select {
	case err := <-failed:
		b.Fatal(err)
	default:
	}
}
