package grpcserver

import (
	"context"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/types/known/durationpb"
)

// The poll time of a receive under the proxy's defaults, for what each
// client sends (grpc-v5 reference §6.2), never past the deadline.
func TestPollTime(t *testing.T) {
	p := DefaultReceivePolicy()
	now := time.Unix(1_700_000_000, 0)
	cases := []struct {
		name     string
		deadline time.Duration // 0: none
		poll     *durationpb.Duration
		want     time.Duration
	}{
		{"Go simple, await 5 s (deadline 8 s)", 8 * time.Second, nil, 6500 * time.Millisecond},
		{"Go simple, await 0 (deadline 3 s)", 3 * time.Second, nil, 2500 * time.Millisecond},
		{"Java simple, await 2 s", 12 * time.Second, durationpb.New(2 * time.Second), 5 * time.Second},
		{"push, server's 20 s", 23 * time.Second, durationpb.New(20 * time.Second), 20 * time.Second},
		// The Rust SDK (rocketmq 5.0.0 and its push consumer) sends its
		// long-polling timeout (default 40 s) both in the request and as
		// the call's whole deadline.
		{"Rust, default 40 s (deadline 40 s)", 40 * time.Second, durationpb.New(40 * time.Second), 20 * time.Second},
		{"Rust, 8 s (deadline 8 s)", 8 * time.Second, durationpb.New(8 * time.Second), 7500 * time.Millisecond},
		{"Rust, 3 s (deadline 3 s)", 3 * time.Second, durationpb.New(3 * time.Second), 2500 * time.Millisecond},
		{"asks 60 s", 90 * time.Second, durationpb.New(time.Minute), 20 * time.Second},
		{"deadline already too short", 300 * time.Millisecond, durationpb.New(20 * time.Second), 0},
		{"no deadline", 0, nil, 20 * time.Second},
	}
	for _, tc := range cases {
		ctx := context.Background()
		if tc.deadline > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, now.Add(tc.deadline))
			defer cancel()
		}
		got := p.pollTime(ctx, &v2.ReceiveMessageRequest{LongPollingTimeout: tc.poll}, 3*time.Second, now)
		if got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
