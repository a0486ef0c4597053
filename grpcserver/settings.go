package grpcserver

import (
	"errors"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
)

// A v5 client opens a Telemetry stream per endpoint and writes its Settings
// first; the server must answer each with TelemetryCommand{status OK,
// settings}, the client's settings merged with the server's values (the
// proxy's GrpcClientSettingsManager). Go v5.1.3 Start() blocks until that
// reply arrives; Java start-up fails without it. Fields the clients need
// (grpc-v5 reference §4.4): producers publishing.max_body_size (0 refuses
// every send client-side), publishing.validate_message_type and an
// exponential backoff_policy (Java throws on any other strategy); push
// consumers subscription.receive_batch_size, long_polling_timeout, fifo and
// a backoff_policy with a strategy.

// ExponentialPolicy is a retry back-off that starts at Initial and grows by
// Multiplier up to Max.
type ExponentialPolicy struct {
	Initial, Max time.Duration
	Multiplier   float32
}

// GroupPolicy is what a consumer group's configuration contributes to the
// Settings reply: the subscription group's retryMaxTimes, consumeOrderly
// and groupRetryPolicy (remoting/.../subscription/SubscriptionGroupConfig.java).
// Exactly one of Customized and Exponential is used; Exponential wins when
// set.
type GroupPolicy struct {
	RetryMaxTimes int32 // backoff_policy.max_attempts = RetryMaxTimes + 1
	Orderly       bool  // subscription.fifo
	Customized    []time.Duration
	Exponential   *ExponentialPolicy
}

// DefaultRetryDelays is the default customized retry policy of a
// subscription group (CustomizedRetryPolicy: 1s 5s 10s 30s 1m … 2h), the
// delays of DELAY levels 3 to 18.
var DefaultRetryDelays = []time.Duration{
	time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 3 * time.Minute, 4 * time.Minute, 5 * time.Minute, 6 * time.Minute,
	7 * time.Minute, 8 * time.Minute, 9 * time.Minute, 10 * time.Minute, 20 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour,
}

// DefaultGroupPolicy is a group without stored configuration: 16 retries,
// not orderly, DefaultRetryDelays.
func DefaultGroupPolicy() GroupPolicy {
	return GroupPolicy{RetryMaxTimes: 16, Customized: DefaultRetryDelays}
}

// SettingsPolicy holds the server's side of the Settings reply.
// DefaultSettingsPolicy has the proxy's defaults (ProxyConfig).
type SettingsPolicy struct {
	ProducerMaxAttempts int32             // grpcClientProducerMaxAttempts, 3
	ProducerBackoff     ExponentialPolicy // 10 ms, 1 s, ×2
	ValidateMessageType bool              // enableTopicMessageTypeCheck, true
	MaxBodyBytes        int32             // maxMessageSize, 4 MiB (popshim: --max-message-size)
	ReceiveBatchSize    int32             // grpcClientConsumerLongPollingBatchSize, 32
	LongPollingTimeout  time.Duration     // grpcClientConsumerMaxLongPollingTimeoutMillis, 20 s
	// Group returns a consumer group's policy; nil, or false from it,
	// means DefaultGroupPolicy. Called on the Telemetry stream's
	// goroutine; it must not block on storage (it reads the core's group
	// table).
	Group func(group string) (GroupPolicy, bool)
}

// DefaultSettingsPolicy returns the proxy's defaults with no group lookup.
func DefaultSettingsPolicy() SettingsPolicy {
	return SettingsPolicy{
		ProducerMaxAttempts: 3,
		ProducerBackoff:     ExponentialPolicy{Initial: 10 * time.Millisecond, Max: time.Second, Multiplier: 2},
		ValidateMessageType: true,
		MaxBodyBytes:        4 << 20,
		ReceiveBatchSize:    32,
		LongPollingTimeout:  20 * time.Second,
	}
}

// errNoPubSub: a Settings item with neither publishing nor subscription;
// the proxy fails the stream with INVALID_ARGUMENT.
var errNoPubSub = errors.New("there is no publishing or subscription data in settings")

// Reply returns the settings to send back for the client's settings in:
// a copy of in with the producer or consumer values set as above and
// metric {on: false}. in is not modified. Errors: errNoPubSub. Any
// goroutine.
func (p SettingsPolicy) Reply(in *v2.Settings) (*v2.Settings, error) {
	out := proto.Clone(in).(*v2.Settings)
	switch {
	case out.GetPublishing() != nil:
		out.BackoffPolicy = &v2.RetryPolicy{
			MaxAttempts: p.ProducerMaxAttempts,
			Strategy:    &v2.RetryPolicy_ExponentialBackoff{ExponentialBackoff: exponential(p.ProducerBackoff)},
		}
		out.GetPublishing().ValidateMessageType = p.ValidateMessageType
		out.GetPublishing().MaxBodySize = p.MaxBodyBytes
	case out.GetSubscription() != nil:
		g := DefaultGroupPolicy()
		if p.Group != nil {
			if gp, ok := p.Group(out.GetSubscription().GetGroup().GetName()); ok {
				g = gp
			}
		}
		sub := out.GetSubscription()
		sub.ReceiveBatchSize = ptr(p.ReceiveBatchSize)
		sub.LongPollingTimeout = durationpb.New(p.LongPollingTimeout)
		sub.Fifo = ptr(g.Orderly)
		bp := &v2.RetryPolicy{MaxAttempts: g.RetryMaxTimes + 1}
		if g.Exponential != nil {
			bp.Strategy = &v2.RetryPolicy_ExponentialBackoff{ExponentialBackoff: exponential(*g.Exponential)}
		} else {
			next := make([]*durationpb.Duration, len(g.Customized))
			for i, d := range g.Customized {
				next[i] = durationpb.New(d)
			}
			bp.Strategy = &v2.RetryPolicy_CustomizedBackoff{CustomizedBackoff: &v2.CustomizedBackoff{Next: next}}
		}
		out.BackoffPolicy = bp
	default:
		return nil, errNoPubSub
	}
	out.Metric = &v2.Metric{On: false}
	return out, nil
}

func exponential(e ExponentialPolicy) *v2.ExponentialBackoff {
	return &v2.ExponentialBackoff{Initial: durationpb.New(e.Initial), Max: durationpb.New(e.Max), Multiplier: e.Multiplier}
}
