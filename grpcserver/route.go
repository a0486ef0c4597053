package grpcserver

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"sync/atomic"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/meta"
	"github.com/popshim/popshim/codec"
)

// QueryRoute and QueryAssignment (the proxy's RouteActivity).
//
// QueryRoute answers a topic's route from the core (broker.Broker.Route:
// the external name servers' route with --namesrv-addr, this broker alone
// with the embedded name server), one v2.MessageQueue per queue of every
// broker in it:
//   - id = the broker's real queue id; permission READ_WRITE, READ or
//     WRITE from the topic's perm and whether the id is below its read and
//     write queue counts (queues with neither are left out); broker {name,
//     id 0, endpoints by the rule of RouteEndpoints};
//   - accept_message_types from the topic's message.type attribute as this
//     broker stores it (NORMAL, FIFO, DELAY, TRANSACTION; MIXED = all
//     four; absent = NORMAL, the default of the proxy's topic check).
//
// An unknown topic that --auto-create-topic would create (not a retry,
// DLQ or system topic) is answered with the route it would get, accepting
// every message type, and is not created: a v5 producer has no TBW102
// fallback, so its look-up must succeed, and its first SendMessage creates
// the topic with that message's type (send.go); a consumer's look-up of a
// mistyped topic creates nothing, and its ReceiveMessage answers
// TOPIC_NOT_FOUND until the topic exists. Codes: ILLEGAL_TOPIC (bad
// name), TOPIC_NOT_FOUND (no route, or a route without any usable queue).
//
// QueryAssignment answers, as the proxy does, one assignment per readable
// broker of the route with queue id -1 ("pop every queue of that
// broker") for a normal group, and one per readable queue when the group
// consumes orderly (SubscriptionGroupConfig consumeMessageOrderly, what
// makes the Settings reply say fifo). No readable queue ⇒ FORBIDDEN "no
// readable queue", as the proxy.

// RouteEndpoints is the rule that gives each broker of a route the gRPC
// endpoint clients should use for it:
//   - this broker: the endpoints of the request, echoed (the address the
//     client already reached, so it reuses its connection; what the proxy
//     answers in cluster mode); when the request names none, Advertise,
//     else the host of the broker's advertised remoting address with this
//     endpoint's port;
//   - every other broker of the route (several popshim brokers on one name
//     server): the host of its master remoting address as the name server
//     holds it, with this endpoint's gRPC port. All brokers of a cluster
//     must therefore serve gRPC on the same port (--grpc-listen), as
//     rocketmq-proxy in local mode assumes.
type RouteEndpoints struct {
	// Port is this endpoint's gRPC port as clients reach it; 0: the port
	// Serve's listener is bound to.
	Port int
	// Advertise is "host:port" answered for this broker when a request
	// names no endpoints; "": the rule above.
	Advertise string
}

// routeRule applies RouteEndpoints; the bound port arrives with Serve.
type routeRule struct {
	cfg   RouteEndpoints
	bound atomic.Int32
}

func newRouteRule(cfg RouteEndpoints) *routeRule { return &routeRule{cfg: cfg} }

func (r *routeRule) setBoundPort(p int) { r.bound.Store(int32(p)) }

func (r *routeRule) port() int {
	if r.cfg.Port > 0 {
		return r.cfg.Port
	}
	return int(r.bound.Load())
}

// endpointsOf builds v2.Endpoints for host:port (scheme from the host:
// IPv4, IPv6 or DOMAIN_NAME).
func endpointsOf(host string, port int) *v2.Endpoints {
	scheme := v2.AddressScheme_DOMAIN_NAME
	if a, err := netip.ParseAddr(host); err == nil {
		scheme = v2.AddressScheme_IPv4
		if a.Is6() && !a.Is4In6() {
			scheme = v2.AddressScheme_IPv6
		}
	}
	return &v2.Endpoints{Scheme: scheme, Addresses: []*v2.Address{{Host: host, Port: int32(port)}}}
}

// forBroker returns the endpoints for broker name with remoting address
// addr ("ip:port", may be ""), answering request endpoints req; nil when
// none can be given.
func (r *routeRule) forBroker(self bool, addr string, req *v2.Endpoints) *v2.Endpoints {
	if self {
		if len(req.GetAddresses()) > 0 {
			return req
		}
		if r.cfg.Advertise != "" {
			if h, p, err := net.SplitHostPort(r.cfg.Advertise); err == nil {
				if n, err := strconv.Atoi(p); err == nil {
					return endpointsOf(h, n)
				}
			}
		}
	}
	h, _, err := net.SplitHostPort(addr)
	if err != nil || h == "" || r.port() == 0 {
		return nil
	}
	return endpointsOf(h, r.port())
}

// acceptTypes returns the message types a topic takes, from its
// message.type attribute (common/.../attribute/TopicMessageType.java).
func acceptTypes(attrs map[string]string) []v2.MessageType {
	switch attrs[topicMessageTypeKey] {
	case "FIFO":
		return []v2.MessageType{v2.MessageType_FIFO}
	case "DELAY":
		return []v2.MessageType{v2.MessageType_DELAY}
	case "TRANSACTION":
		return []v2.MessageType{v2.MessageType_TRANSACTION}
	case "MIXED":
		return []v2.MessageType{v2.MessageType_NORMAL, v2.MessageType_FIFO, v2.MessageType_DELAY, v2.MessageType_TRANSACTION}
	}
	return []v2.MessageType{v2.MessageType_NORMAL}
}

// topicMessageTypeKey is the topic attribute naming the message type
// (TopicAttributes.TOPIC_MESSAGE_TYPE_ATTRIBUTE).
const topicMessageTypeKey = meta.TopicMessageTypeKey

// queuePermission is the v2 permission of queue i of a broker with the
// given perm bits and queue counts.
func queuePermission(i, read, write, perm int32) v2.Permission {
	r := i < read && perm&codec.PermRead != 0
	w := i < write && perm&codec.PermWrite != 0
	switch {
	case r && w:
		return v2.Permission_READ_WRITE
	case r:
		return v2.Permission_READ
	case w:
		return v2.Permission_WRITE
	}
	return v2.Permission_NONE
}

// awaitRoute runs the core's Route and waits for its answer or ctx.
func (s *service) awaitRoute(ctx context.Context, topic string) (broker.TopicRoute, error) {
	ch := make(chan routeAnswer, 1)
	s.core.Route(topic, func(rt broker.TopicRoute, err error) { ch <- routeAnswer{rt, err} })
	select {
	case a := <-ch:
		return a.rt, a.err
	case <-ctx.Done():
		return broker.TopicRoute{}, ctx.Err()
	}
}

type routeAnswer struct {
	rt  broker.TopicRoute
	err error
}

// routeOf is the route of topic; a non-nil Status is the refusal. An
// unknown topic that auto-creation would create gets the route it would
// have (broker.Broker.ProvisionalRoute; provisional true): nothing is
// created by a look-up, the first SendMessage creates the topic.
func (s *service) routeOf(ctx context.Context, topic string) (rt broker.TopicRoute, provisional bool, st *v2.Status) {
	if err := validateTopic(topic); err != nil {
		return broker.TopicRoute{}, false, NewStatus(v2.Code_ILLEGAL_TOPIC, err.Error())
	}
	rt, err := s.awaitRoute(ctx, topic)
	if e := broker.ErrorOf(err); e != nil && e.Code == codec.TopicNotExist {
		if prt, ok := s.core.ProvisionalRoute(topic); ok {
			return prt, true, nil
		}
	}
	if err != nil {
		return rt, false, statusOfCore(OpGeneric, err)
	}
	return rt, false, nil
}

// routeTypes is the accept_message_types of topic's queues: every type
// for a provisional route (the first SendMessage fixes the topic's type,
// GetOrCreateTyped), else the topic's message.type (acceptTypes).
func (s *service) routeTypes(topic string, provisional bool) []v2.MessageType {
	if provisional {
		return acceptTypes(map[string]string{topicMessageTypeKey: "MIXED"})
	}
	m, _ := s.core.Topics.Get(topic)
	return acceptTypes(m.Attributes)
}

// QueryRoute implements v2.MessagingServiceServer; see the top of this file.
func (s *service) QueryRoute(ctx context.Context, req *v2.QueryRouteRequest) (*v2.QueryRouteResponse, error) {
	if _, st := requireClient(ctx); st != nil {
		return &v2.QueryRouteResponse{Status: st}, nil
	}
	if st := s.authorize(ctx, req); st != nil {
		return &v2.QueryRouteResponse{Status: st}, nil
	}
	topic := req.GetTopic().GetName()
	rt, provisional, st := s.routeOf(ctx, topic)
	if st != nil {
		return &v2.QueryRouteResponse{Status: st}, nil
	}
	types := s.routeTypes(topic, provisional)
	var mqs []*v2.MessageQueue
	for _, bq := range rt.Brokers {
		self := bq.BrokerName == s.core.Cfg.BrokerName
		ep := s.routes.forBroker(self, bq.Addrs[0], req.GetEndpoints())
		if ep == nil {
			continue
		}
		b := &v2.Broker{Name: bq.BrokerName, Id: 0, Endpoints: ep}
		for i := int32(0); i < max(bq.ReadQueueNums, bq.WriteQueueNums); i++ {
			p := queuePermission(i, bq.ReadQueueNums, bq.WriteQueueNums, bq.Perm)
			if p == v2.Permission_NONE {
				continue
			}
			mqs = append(mqs, &v2.MessageQueue{Topic: &v2.Resource{Name: topic, ResourceNamespace: req.GetTopic().GetResourceNamespace()},
				Id: i, Permission: p, Broker: b, AcceptMessageTypes: types})
		}
	}
	if len(mqs) == 0 {
		return &v2.QueryRouteResponse{Status: NewStatus(v2.Code_TOPIC_NOT_FOUND, "topic "+topic+" has no usable queue")}, nil
	}
	return &v2.QueryRouteResponse{Status: StatusOK(), MessageQueues: mqs}, nil
}

// QueryAssignment implements v2.MessagingServiceServer; see the top of
// this file. Codes besides QueryRoute's: ILLEGAL_CONSUMER_GROUP,
// FORBIDDEN "no readable queue".
func (s *service) QueryAssignment(ctx context.Context, req *v2.QueryAssignmentRequest) (*v2.QueryAssignmentResponse, error) {
	if _, st := requireClient(ctx); st != nil {
		return &v2.QueryAssignmentResponse{Status: st}, nil
	}
	if st := s.authorize(ctx, req); st != nil {
		return &v2.QueryAssignmentResponse{Status: st}, nil
	}
	group := req.GetGroup().GetName()
	if err := validateGroup(group); err != nil {
		return &v2.QueryAssignmentResponse{Status: NewStatus(v2.Code_ILLEGAL_CONSUMER_GROUP, err.Error())}, nil
	}
	topic := req.GetTopic().GetName()
	rt, provisional, st := s.routeOf(ctx, topic)
	if st != nil {
		return &v2.QueryAssignmentResponse{Status: st}, nil
	}
	orderly := false
	if g, ok := s.core.Groups.Get(group); ok {
		orderly = g.ConsumeMessageOrderly
	}
	res := &v2.Resource{Name: topic, ResourceNamespace: req.GetTopic().GetResourceNamespace()}
	types := s.routeTypes(topic, provisional)
	var out []*v2.Assignment
	for _, bq := range rt.Brokers {
		if bq.Perm&codec.PermRead == 0 || bq.ReadQueueNums <= 0 {
			continue
		}
		self := bq.BrokerName == s.core.Cfg.BrokerName
		ep := s.routes.forBroker(self, bq.Addrs[0], req.GetEndpoints())
		if ep == nil {
			continue
		}
		b := &v2.Broker{Name: bq.BrokerName, Id: 0, Endpoints: ep}
		if !orderly {
			out = append(out, &v2.Assignment{MessageQueue: &v2.MessageQueue{Topic: res, Id: -1,
				Permission: v2.Permission_READ_WRITE, Broker: b, AcceptMessageTypes: types}})
			continue
		}
		for i := int32(0); i < bq.ReadQueueNums; i++ {
			out = append(out, &v2.Assignment{MessageQueue: &v2.MessageQueue{Topic: res, Id: i,
				Permission: queuePermission(i, bq.ReadQueueNums, bq.WriteQueueNums, bq.Perm), Broker: b, AcceptMessageTypes: types}})
		}
	}
	if len(out) == 0 {
		return &v2.QueryAssignmentResponse{Status: NewStatus(v2.Code_FORBIDDEN, "no readable queue")}, nil
	}
	return &v2.QueryAssignmentResponse{Status: StatusOK(), Assignments: out}, nil
}
