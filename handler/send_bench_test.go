package handler_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/stack/stacktest"
)

// BenchmarkSendMessage measures pipelined produce round trips over one real
// TCP connection (64 in flight) into a real store: "single" is a
// SEND_MESSAGE_V2 of a 256-byte body with TAGS, KEYS and UNIQ_KEY as a Java
// producer sends it, "batch8" a SEND_BATCH_MESSAGE of eight such messages,
// "delayed" a SEND_MESSAGE_V2 with DELAY level 3 (stored as a timer
// entry). ns/op and allocs/op include the client's side of the round trip;
// the group-commit writer batches the fsyncs of the requests in flight.
func BenchmarkSendMessage(b *testing.B) {
	body := []byte(strings.Repeat("x", 256))
	props := map[string]string{codec.PropertyTags: "TagA", codec.PropertyKeys: "k1",
		codec.PropertyUniqClientMessageIDKeyIdx: "7F0000010001000000000000000000AB", "WAIT": "true"}
	for _, mode := range []string{"single", "batch8", "delayed"} {
		b.Run(mode, func(b *testing.B) {
			cfg := popConfig(b.TempDir())
			st := stacktest.Start(b, cfg)
			c, err := client.Dial(st.BrokerAddr())
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			p := map[string]string{}
			for k, v := range props {
				p[k] = v
			}
			if mode == "delayed" {
				p[codec.PropertyDelayTimeLevel] = "3"
			}
			ps, err := codec.EncodeProperties(p)
			if err != nil {
				b.Fatal(err)
			}
			h := codec.SendMessageRequestHeader{ProducerGroup: "PG", Topic: "BenchSend", DefaultTopic: "TBW102",
				DefaultTopicQueueNums: 4, QueueID: 0, BornTimestamp: time.Now().UnixMilli(), Properties: ps}
			code, reqBody := codec.RequestSendMessageV2, body
			if mode == "batch8" {
				code, h.Batch, h.Properties = codec.RequestSendBatchMessage, true, ""
				reqBody = nil
				for range 8 {
					if reqBody, err = codec.AppendBatchEntry(reqBody, &codec.Message{Topic: h.Topic, Body: body, Properties: ps}); err != nil {
						b.Fatal(err)
					}
				}
			}
			newReq := func() *codec.Command {
				req := codec.NewRequest(code, 0, nil, reqBody)
				h.EncodeV2(req)
				return req
			}
			// The first send auto-creates the topic.
			if r, err := c.Invoke(context.Background(), newReq()); err != nil || r.Code != codec.Success {
				b.Fatalf("first send: %v %+v", err, r)
			}
			window := make(chan struct{}, 64)
			failed := make(chan error, 1)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				window <- struct{}{}
				err := c.InvokeAsync(newReq(), func(r *codec.Command, err error) {
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
