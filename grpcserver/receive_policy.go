package grpcserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
)

// ReceivePolicy holds the rules ReceiveMessage applies to a request.
// DefaultReceivePolicy has the proxy's values (ProxyConfig:
// minInvisibleTimeMillsForRecv, maxInvisibleTimeMills,
// grpcClientConsumerMin/MaxLongPollingTimeoutMillis).
type ReceivePolicy struct {
	// MinInvisible and MaxInvisible bound the invisible_duration of a
	// simple consumer's receive (10 s and 12 h); outside ⇒
	// ILLEGAL_INVISIBLE_TIME.
	MinInvisible, MaxInvisible time.Duration
	// MinLongPolling and MaxLongPolling clamp the poll time (5 s and 20 s)
	// before the call's deadline bounds it (see pollTime).
	MinLongPolling, MaxLongPolling time.Duration
	// DeadlineMargin is kept free before the call's deadline for the
	// answer to travel (the poll ends this much earlier).
	DeadlineMargin time.Duration
	// DefaultRequestTimeout stands in for the client's request_timeout when
	// its Settings are unknown (3 s, the clients' default).
	DefaultRequestTimeout time.Duration
	// MaxInflatedBytes bounds the check inflation of a compressed body
	// re-framed as gzip (DeliveryOptions).
	MaxInflatedBytes int
}

// DefaultReceivePolicy returns the proxy's values.
func DefaultReceivePolicy() ReceivePolicy {
	return ReceivePolicy{
		MinInvisible: 10 * time.Second, MaxInvisible: 12 * time.Hour,
		MinLongPolling: 5 * time.Second, MaxLongPolling: 20 * time.Second,
		DeadlineMargin: 500 * time.Millisecond, DefaultRequestTimeout: 3 * time.Second,
		MaxInflatedBytes: 64 << 20,
	}
}

// pollTime is how long a receive may park (the proxy's
// ReceiveMessageActivity, without its refusal of short deadlines):
//  1. want = long_polling_timeout when the request has one (Java always,
//     Go push consumers), else the time left on the call's deadline minus
//     half the client's request_timeout (the Go SimpleConsumer sends no
//     polling timeout and a deadline of its await duration + 3 s);
//  2. clamp want to [MinLongPolling, MaxLongPolling];
//  3. never past the call's deadline minus DeadlineMargin; ≤ 0 means no
//     parking at all: the receive answers at once (MESSAGE_NOT_FOUND when
//     nothing is there) instead of failing as the proxy does
//     (ILLEGAL_POLLING_TIME / BAD_REQUEST for a deadline under 5 s).
//
// A call without a deadline gets want. Any goroutine.
func (p ReceivePolicy) pollTime(ctx context.Context, req *v2.ReceiveMessageRequest, requestTimeout time.Duration, now time.Time) time.Duration {
	if requestTimeout <= 0 {
		requestTimeout = p.DefaultRequestTimeout
	}
	dl, hasDeadline := ctx.Deadline()
	remaining := dl.Sub(now)
	var want time.Duration
	switch {
	case req.LongPollingTimeout != nil:
		want = req.GetLongPollingTimeout().AsDuration()
	case hasDeadline:
		want = remaining - requestTimeout/2
	default:
		want = p.MaxLongPolling
	}
	want = max(p.MinLongPolling, min(want, p.MaxLongPolling))
	if hasDeadline {
		want = min(want, remaining-p.DeadlineMargin)
	}
	return max(want, 0)
}

// invisibleOf returns the invisible time of a receive: LeasePolicy's
// Invisible for auto-renewed (push consumer) receives, whatever the
// request says (as the proxy's defaultInvisibleTimeMills), else the
// request's, which must lie in [MinInvisible, MaxInvisible]; a non-nil
// Status is the ILLEGAL_INVISIBLE_TIME refusal.
func (p ReceivePolicy) invisibleOf(req *v2.ReceiveMessageRequest, autoRenew time.Duration) (time.Duration, *v2.Status) {
	if req.GetAutoRenew() {
		return autoRenew, nil
	}
	if req.InvisibleDuration == nil {
		return 0, NewStatus(v2.Code_ILLEGAL_INVISIBLE_TIME, "invisible_duration is required for a receive without auto_renew")
	}
	d := req.GetInvisibleDuration().AsDuration()
	if d < p.MinInvisible || d > p.MaxInvisible {
		return 0, NewStatus(v2.Code_ILLEGAL_INVISIBLE_TIME,
			fmt.Sprintf("the invisible time %v is out of range [%v, %v]", d, p.MinInvisible, p.MaxInvisible))
	}
	return d, nil
}

// Filter expression types of the core (the remoting expressionType).
const (
	exprTag   = "TAG"
	exprSQL92 = "SQL92"
)

// filterOf converts a v2 filter to the core's expression type and
// expression: TAG (an empty expression is "*"), SQL → SQL92.
func filterOf(f *v2.FilterExpression) (expType, exp string) {
	exp = strings.TrimSpace(f.GetExpression())
	if f.GetType() == v2.FilterType_SQL {
		return exprSQL92, exp
	}
	if exp == "" {
		exp = "*"
	}
	return exprTag, exp
}

// splitTags splits a TAG expression "a || b" into its tags.
func splitTags(exp string) []string {
	var tags []string
	for t := range strings.SplitSeq(exp, "||") {
		if t = strings.TrimSpace(t); t != "" {
			tags = append(tags, t)
		}
	}
	return tags
}
