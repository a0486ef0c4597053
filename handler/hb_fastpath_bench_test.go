package handler_test

import (
	"fmt"
	"testing"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/stack/stacktest"
)

// BenchmarkHeartbeat measures pipelined HEART_BEAT round trips over one
// real TCP connection (64 in flight) of a client with two push consumer
// groups and one producer group, as a Java client sends them:
// "unchanged" repeats one body (the fast path after the first), and
// "alternating" switches between two bodies each time (every heartbeat
// takes the full path). ns/op is the round trip including the client.
func BenchmarkHeartbeat(b *testing.B) {
	for _, mode := range []string{"unchanged", "alternating"} {
		b.Run(mode, func(b *testing.B) {
			cfg := popConfig(b.TempDir())
			st := stacktest.Start(b, cfg)
			c, err := client.Dial(st.BrokerAddr())
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			var bodies [2][]byte
			for i := range bodies {
				bodies[i] = codec.EncodeHeartbeatData(&codec.HeartbeatData{ClientID: "10.0.0.1@bench#1",
					ProducerDataSet: []codec.ProducerData{{GroupName: "CLIENT_INNER_PRODUCER"}},
					ConsumerDataSet: []codec.ConsumerData{hbConsumer("GA", "TopicA"), hbConsumer(fmt.Sprintf("GB%d", i), "TopicB")}})
			}
			window := make(chan struct{}, 64)
			failed := make(chan error, 1)
			b.ResetTimer()
			for i := range b.N {
				body := bodies[0]
				if mode == "alternating" {
					body = bodies[i%2]
				}
				window <- struct{}{}
				err := c.InvokeAsync(codec.NewRequest(codec.RequestHeartBeat, 0, nil, body), func(r *codec.Command, err error) {
					if err == nil && r.Code != codec.Success {
						err = fmt.Errorf("code %d: %s", r.Code, r.Remark)
					}
					if err != nil {
						select {
						case failed <- err:
						default:
						}
					}
					<-window
				})
				if err != nil {
					b.Fatal(err)
				}
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
		})
	}
}
