package grpcserver

import (
	"context"
	"strings"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/popshim/popshim/broker"
	coreclients "github.com/popshim/popshim/broker/clients"
	"github.com/popshim/popshim/codec"
)

// Heartbeat (the proxy's ClientActivity.heartbeat): every client sends it
// 1 s after start and every 10 s. The client type comes from the client's
// Settings (the Go push consumer ≤ v5.1.3 heartbeats as SIMPLE_CONSUMER),
// else from the request. A consumer registers its group with the core
// (broker.Broker.Heartbeat: CONSUME_POP, CLUSTERING, the subscriptions of
// its Settings), so admin tools list it (consumerConnection) and the
// group's retry topic exists; a producer registers the topics of its
// Settings as producer groups (the proxy's producer group is the topic
// name). The registration is tied to the call's connection and leaves
// when it closes. Codes: OK; CLIENT_ID_REQUIRED; ILLEGAL_CONSUMER_GROUP
// for a consumer whose group name is invalid; the core's refusals
// (heartbeat bounds: BAD_REQUEST). Unlike the proxy, a client without
// Settings is not refused with UNRECOGNIZED_CLIENT_TYPE: Go v5.1.2 sends
// data RPCs before its Settings, and OK costs nothing.
func (s *service) Heartbeat(ctx context.Context, req *v2.HeartbeatRequest) (*v2.HeartbeatResponse, error) {
	id, st := requireClient(ctx)
	if st != nil {
		return &v2.HeartbeatResponse{Status: st}, nil
	}
	if st := s.authorize(ctx, req); st != nil {
		return &v2.HeartbeatResponse{Status: st}, nil
	}
	s.clients.heartbeat(id, s.core.Now())
	settings, _ := s.clients.Settings(id)
	typ := settings.GetClientType()
	if typ == v2.ClientType_CLIENT_TYPE_UNSPECIFIED {
		typ = req.GetClientType()
	}
	hr := broker.HeartbeatRequest{ClientID: id, Language: codec.LanguageCodeName(metaValue(ctx, MetaLanguage)),
		Version: registeredVersion(metaValue(ctx, MetaClientVersion)), Protocol: "grpc"}
	if c := connOf(ctx); c != nil {
		hr.ConnID = c.id
		if c.peer.IsValid() {
			hr.RemoteAddr = c.peer.String()
		}
	}
	switch typ {
	case v2.ClientType_PUSH_CONSUMER, v2.ClientType_SIMPLE_CONSUMER, v2.ClientType_PULL_CONSUMER, v2.ClientType_LITE_PUSH_CONSUMER, v2.ClientType_LITE_SIMPLE_CONSUMER:
		group := req.GetGroup().GetName()
		if group == "" {
			group = settings.GetSubscription().GetGroup().GetName()
		}
		if err := validateGroup(group); err != nil {
			return &v2.HeartbeatResponse{Status: NewStatus(v2.Code_ILLEGAL_CONSUMER_GROUP, err.Error())}, nil
		}
		hr.Consumers = []coreclients.ConsumerRegistration{{Group: group, ConsumeType: codec.ConsumePop,
			MessageModel: codec.MessageModelCluster, ConsumeFromWhere: "CONSUME_FROM_LAST_OFFSET",
			Subscriptions: subscriptionsOf(settings)}}
	case v2.ClientType_PRODUCER:
		for _, t := range settings.GetPublishing().GetTopics() {
			hr.Producers = append(hr.Producers, t.GetName())
		}
	}
	var herr error
	s.core.Heartbeat(hr, func(_ broker.HeartbeatResult, err error) { herr = err }) // done runs before Heartbeat returns
	if herr != nil {
		return &v2.HeartbeatResponse{Status: statusOfCore(OpGeneric, herr)}, nil
	}
	return &v2.HeartbeatResponse{Status: StatusOK()}, nil
}

// subscriptionsOf converts the subscriptions of a consumer's Settings to
// the core's form (SubscriptionData: topic, expression, type, tags).
func subscriptionsOf(st *v2.Settings) []coreclients.Subscription {
	entries := st.GetSubscription().GetSubscriptions()
	out := make([]coreclients.Subscription, 0, len(entries))
	now := time.Now().UnixMilli()
	for _, e := range entries {
		expType, exp := filterOf(e.GetExpression())
		sub := coreclients.Subscription{Topic: e.GetTopic().GetName(), SubString: exp, ExpressionType: expType, SubVersion: now}
		if expType == exprTag && exp != "*" {
			sub.Tags = splitTags(exp)
		}
		out = append(out, sub)
	}
	return out
}

// unregister removes client id from its consumer group (or, without one,
// from the producer groups of its Settings) in the core's client table:
// NotifyClientTermination.
func (s *service) unregister(ctx context.Context, id, group string) {
	_ = ctx
	if group != "" {
		s.core.UnregisterClient(broker.UnregisterClientRequest{ClientID: id, ConsumerGroup: group}, func(error) {})
	}
}

// registeredVersion is the version ordinal a client's registrations carry
// (consumer connections, the rocketmq_*_connections gauges), from its
// x-mq-client-version as the proxy's ClientActivity.parseClientVersion
// reads it: the upper-cased value when it names an MQVersion constant
// ("v5_2_0" → V5_2_0), else the server's own version
// (codec.CurrentVersion), which is what an SDK's "5.0.7" gives.
func registeredVersion(v string) int32 {
	if o, ok := codec.VersionOrdinal(strings.ToUpper(v)); ok && v != "" {
		return o
	}
	return codec.CurrentVersion
}

// clientVersionOrdinal is the MQVersion ordinal the endpoint passes to the
// core for v5 clients (V5_0_0): from V3_4_9 on a request's
// maxReconsumeTimes counts, and v5 clients speak for a 5.x broker.
const clientVersionOrdinal int32 = 413

// groupPolicy is the SettingsPolicy.Group of the endpoint: a consumer
// group's retry limit (retryMaxTimes, else --max-reconsume-times), FIFO
// flag (consumeMessageOrderly) and retry back-off (groupRetryPolicy) from
// the core's group table. Memory only.
func (s *service) groupPolicy(group string) (GroupPolicy, bool) {
	gp := GroupPolicy{RetryMaxTimes: s.core.GroupRetryMax(group), Customized: DefaultRetryDelays}
	g, ok := s.core.Groups.Get(group)
	if !ok {
		return gp, true
	}
	gp.Orderly = g.ConsumeMessageOrderly
	rp := g.GroupRetryPolicy
	switch {
	case rp.Type == codec.GroupRetryPolicyExponential && rp.Exponential != nil:
		e := rp.Exponential
		gp.Exponential = &ExponentialPolicy{Initial: time.Duration(e.InitialMillis) * time.Millisecond,
			Max: time.Duration(e.MaxMillis) * time.Millisecond, Multiplier: float32(e.Multiplier)}
	case rp.Customized != nil && len(rp.Customized.NextMillis) > 0:
		gp.Customized = make([]time.Duration, len(rp.Customized.NextMillis))
		for i, ms := range rp.Customized.NextMillis {
			gp.Customized[i] = time.Duration(ms) * time.Millisecond
		}
	}
	return gp, true
}

// retryDelay is the back-off of a group's policy before delivery attempt
// attempt+1 (attempt ≥ 1 is the delivery that failed).
func (p GroupPolicy) retryDelay(attempt int32) time.Duration {
	if p.Exponential != nil {
		d := float64(p.Exponential.Initial)
		for i := int32(1); i < attempt && d < float64(p.Exponential.Max); i++ {
			d *= float64(p.Exponential.Multiplier)
		}
		return min(time.Duration(d), p.Exponential.Max)
	}
	if len(p.Customized) == 0 {
		return time.Second
	}
	i := int(attempt) - 1
	i = max(0, min(i, len(p.Customized)-1))
	return p.Customized[i]
}
