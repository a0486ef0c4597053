package broker_test

import (
	"strings"
	"testing"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/codec"
)

// BenchmarkCoreSend measures Broker.Send without a socket, 64 sends in
// flight into a real store: "single" is a 256-byte message with TAGS, KEYS
// and UNIQ_KEY as a Java producer sends it, "batch8" a batch of eight such
// messages, "delayed" a single message with DELAY level 3 (a timer entry).
// allocs/op is the core's produce path: validation, record, writer op and
// completion (the writer's own share included).
func BenchmarkCoreSend(b *testing.B) {
	body := strings.Repeat("x", 256)
	kv := []string{codec.PropertyTags, "TagA", codec.PropertyKeys, "k1",
		codec.PropertyUniqClientMessageIDKeyIdx, "7F0000010001000000000000000000AB", "WAIT", "true"}
	for _, mode := range []string{"single", "batch8", "delayed"} {
		b.Run(mode, func(b *testing.B) {
			f := brokertest.Start(b, nil, nil)
			m := map[string]string{}
			for i := 0; i < len(kv); i += 2 {
				m[kv[i]] = kv[i+1]
			}
			if mode == "delayed" {
				m[codec.PropertyDelayTimeLevel] = "3"
			}
			ps, err := codec.EncodeProperties(m)
			if err != nil {
				b.Fatal(err)
			}
			r := broker.SendRequest{ProducerGroup: "PG", Topic: "BenchSend", QueueID: 0, BornTimestamp: 1_700_000_000_000,
				Properties: ps, ClientVersion: broker.VersionV3_4_9 + 300, BornHost: sendPeer, Body: []byte(body)}
			if mode == "batch8" {
				r.Batch, r.Body = true, nil
				for range 8 {
					if r.Body, err = codec.AppendBatchEntry(r.Body, &codec.Message{Body: []byte(body), Properties: ps}); err != nil {
						b.Fatal(err)
					}
				}
			}
			// The first send auto-creates the topic.
			if _, err := brokertest.Await(b, func(done func(broker.SendResult, error)) { f.Broker.Send(r, done) }); err != nil {
				b.Fatal(err)
			}
			window := make(chan struct{}, 64)
			failed := make(chan error, 1)
			done := func(_ broker.SendResult, err error) {
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
				f.Broker.Send(r, done)
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
