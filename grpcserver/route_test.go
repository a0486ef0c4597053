package grpcserver

import (
	"slices"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/conf"
)

var accessPoint = &v2.Endpoints{Scheme: v2.AddressScheme_IPv4, Addresses: []*v2.Address{{Host: "127.0.0.1", Port: 8081}}}

// QueryRoute: one queue per queue id with its permission, the topic's
// message types, this broker with the request's endpoints; a topic
// created by the look-up itself; the refusals.
func TestQueryRoute(t *testing.T) {
	f := newFixture(t, nil, nil)
	fifo := unique("fifo")
	f.createTopic(fifo, 3, "FIFO")
	r, err := f.c.QueryRoute(f.ctx("r@1"), &v2.QueryRouteRequest{Topic: &v2.Resource{Name: fifo}, Endpoints: accessPoint})
	if err != nil || r.GetStatus().GetCode() != v2.Code_OK || len(r.GetMessageQueues()) != 3 {
		t.Fatalf("%v %v", r, err)
	}
	for i, q := range r.GetMessageQueues() {
		b := q.GetBroker()
		if q.GetId() != int32(i) || q.GetPermission() != v2.Permission_READ_WRITE || b.GetName() != brokertest.BrokerName ||
			b.GetId() != 0 || b.GetEndpoints().GetAddresses()[0].GetPort() != 8081 ||
			!slices.Equal(q.GetAcceptMessageTypes(), []v2.MessageType{v2.MessageType_FIFO}) {
			t.Errorf("queue %d: %v", i, q)
		}
	}
	// An unknown topic (auto-create is on) gets the route it would have,
	// the default queue count accepting every type, and is not created.
	fresh := unique("fresh")
	r, _ = f.c.QueryRoute(f.ctx("r@1"), &v2.QueryRouteRequest{Topic: &v2.Resource{Name: fresh}, Endpoints: accessPoint})
	if r.GetStatus().GetCode() != v2.Code_OK || len(r.GetMessageQueues()) != int(f.core.Cfg.DefaultTopicQueueNums) ||
		!slices.Equal(r.GetMessageQueues()[0].GetAcceptMessageTypes(), allTypes) ||
		r.GetMessageQueues()[0].GetPermission() != v2.Permission_READ_WRITE {
		t.Fatalf("fresh topic: %v", r)
	}
	if _, ok := f.core.Broker.Topics.Get(fresh); ok {
		t.Error("a route look-up created the topic")
	}
	// Without request endpoints this broker is answered with its advertised host and the gRPC port.
	r, _ = f.c.QueryRoute(f.ctx("r@1"), &v2.QueryRouteRequest{Topic: &v2.Resource{Name: fresh}})
	a := r.GetMessageQueues()[0].GetBroker().GetEndpoints().GetAddresses()[0]
	if a.GetHost() != "127.0.0.1" || a.GetPort() != int32(f.srv.svc.routes.port()) || a.GetPort() == 0 {
		t.Errorf("endpoint without request endpoints: %v", a)
	}
	for _, tc := range []struct {
		topic string
		id    string
		want  v2.Code
	}{
		{"bad topic", "r@1", v2.Code_ILLEGAL_TOPIC},
		{"%RETRY%nobody", "r@1", v2.Code_TOPIC_NOT_FOUND},
		{"OFFSET_MOVED_EVENT", "r@1", v2.Code_ILLEGAL_TOPIC},
		{fifo, "", v2.Code_CLIENT_ID_REQUIRED},
	} {
		r, err := f.c.QueryRoute(f.ctx(tc.id), &v2.QueryRouteRequest{Topic: &v2.Resource{Name: tc.topic}, Endpoints: accessPoint})
		if err != nil || r.GetStatus().GetCode() != tc.want {
			t.Errorf("%q: %v %v, want %v", tc.topic, r, err, tc.want)
		}
	}
}

var allTypes = []v2.MessageType{v2.MessageType_NORMAL, v2.MessageType_FIFO, v2.MessageType_DELAY, v2.MessageType_TRANSACTION}

// A topic nobody created: a consumer's look-up, assignment and receive
// leave it absent (the receive answers TOPIC_NOT_FOUND); the first
// SendMessage creates it with that message's type, which later routes
// answer and later sends are checked against; a NORMAL first message adds
// no attribute, as a remoting SEND's auto-creation.
func TestRouteOfUnknownTopic(t *testing.T) {
	f := newFixture(t, nil, nil)
	fifo, plain := unique("fifo_auto"), unique("plain_auto")
	a, err := f.c.QueryAssignment(f.ctx("c@1"), &v2.QueryAssignmentRequest{Topic: &v2.Resource{Name: fifo},
		Group: &v2.Resource{Name: "G_auto"}, Endpoints: accessPoint})
	if err != nil || a.GetStatus().GetCode() != v2.Code_OK || len(a.GetAssignments()) != 1 {
		t.Fatalf("assignment: %v %v", a, err)
	}
	got := f.receive(f.ctx("c@1"), simpleReceive("G_auto", fifo, time.Second))
	if got.status.GetCode() != v2.Code_TOPIC_NOT_FOUND || len(got.msgs) != 0 {
		t.Fatalf("receive from a topic nobody created: %+v", got)
	}
	if _, ok := f.core.Broker.Topics.Get(fifo); ok {
		t.Fatal("a consumer's look-up or receive created the topic")
	}
	m := message(fifo, "first", "T")
	m.SystemProperties.MessageGroup = ptr("order-1")
	f.send("p@1", m)
	if meta, ok := f.core.Broker.Topics.Get(fifo); !ok || meta.Attributes["message.type"] != "FIFO" {
		t.Fatalf("created by a FIFO message: %+v %v", meta, ok)
	}
	r, _ := f.c.QueryRoute(f.ctx("p@1"), &v2.QueryRouteRequest{Topic: &v2.Resource{Name: fifo}, Endpoints: accessPoint})
	if !slices.Equal(r.GetMessageQueues()[0].GetAcceptMessageTypes(), []v2.MessageType{v2.MessageType_FIFO}) {
		t.Errorf("route after creation: %v", r)
	}
	sr, err := f.c.SendMessage(f.ctx("p@1"), &v2.SendMessageRequest{Messages: []*v2.Message{message(fifo, "normal", "T")}})
	if err != nil || sr.GetStatus().GetCode() != v2.Code_MESSAGE_PROPERTY_CONFLICT_WITH_TYPE {
		t.Errorf("NORMAL message to the FIFO topic: %v %v", sr, err)
	}
	if n := len(f.receiveN("c@1", simpleReceive("G_auto", fifo, time.Second), 1, 5)); n != 1 {
		t.Errorf("received %d of the FIFO topic's one message", n)
	}
	f.send("p@1", message(plain, "first", "T"))
	if meta, ok := f.core.Broker.Topics.Get(plain); !ok || meta.Attributes != nil {
		t.Errorf("created by a NORMAL message: %+v %v", meta, ok)
	}
}

// With --auto-create-topic off an unknown topic is TOPIC_NOT_FOUND.
func TestQueryRouteNoAutoCreate(t *testing.T) {
	f := newFixture(t, func(c *conf.Config) { c.AutoCreateTopic = false }, nil)
	r, err := f.c.QueryRoute(f.ctx("r@1"), &v2.QueryRouteRequest{Topic: &v2.Resource{Name: "nowhere"}, Endpoints: accessPoint})
	if err != nil || r.GetStatus().GetCode() != v2.Code_TOPIC_NOT_FOUND {
		t.Fatalf("%v %v", r, err)
	}
	if _, ok := f.core.Broker.Topics.Get("nowhere"); ok {
		t.Error("topic created with auto-creation off")
	}
}

// The endpoint rule for brokers of a route: this broker echoes the
// request, another gets its host with this endpoint's gRPC port.
func TestRouteEndpointRule(t *testing.T) {
	r := newRouteRule(RouteEndpoints{})
	r.setBoundPort(18081)
	if ep := r.forBroker(true, "10.0.0.1:10911", accessPoint); ep != accessPoint {
		t.Errorf("self with request endpoints: %v", ep)
	}
	ep := r.forBroker(false, "10.0.0.2:10911", accessPoint)
	if ep.GetScheme() != v2.AddressScheme_IPv4 || ep.GetAddresses()[0].GetHost() != "10.0.0.2" || ep.GetAddresses()[0].GetPort() != 18081 {
		t.Errorf("other broker: %v", ep)
	}
	if ep := r.forBroker(false, "broker-b.local:10911", nil); ep.GetScheme() != v2.AddressScheme_DOMAIN_NAME {
		t.Errorf("host name: %v", ep)
	}
	if ep := r.forBroker(false, "[::1]:10911", nil); ep.GetScheme() != v2.AddressScheme_IPv6 {
		t.Errorf("IPv6: %v", ep)
	}
	if ep := r.forBroker(false, "", nil); ep != nil {
		t.Errorf("no address: %v", ep)
	}
	adv := newRouteRule(RouteEndpoints{Port: 9876, Advertise: "mq.example:443"})
	if ep := adv.forBroker(true, "10.0.0.1:10911", nil); ep.GetAddresses()[0].GetHost() != "mq.example" || ep.GetAddresses()[0].GetPort() != 443 {
		t.Errorf("advertised: %v", ep)
	}
	if ep := adv.forBroker(false, "10.0.0.3:10911", nil); ep.GetAddresses()[0].GetPort() != 9876 {
		t.Errorf("configured port: %v", ep)
	}
}

// QueryAssignment: one assignment with queue id -1 for a normal group,
// one per queue for an orderly group; refusals.
func TestQueryAssignment(t *testing.T) {
	f := newFixture(t, nil, nil)
	topic := unique("assign")
	f.createTopic(topic, 4, "")
	req := &v2.QueryAssignmentRequest{Topic: &v2.Resource{Name: topic}, Group: &v2.Resource{Name: "cg_a"}, Endpoints: accessPoint}
	r, err := f.c.QueryAssignment(f.ctx("a@1"), req)
	if err != nil || r.GetStatus().GetCode() != v2.Code_OK || len(r.GetAssignments()) != 1 ||
		r.GetAssignments()[0].GetMessageQueue().GetId() != -1 {
		t.Fatalf("normal group: %v %v", r, err)
	}
	orderly := unique("cg_fifo")
	f.createOrderlyGroup(orderly)
	req.Group.Name = orderly
	r, _ = f.c.QueryAssignment(f.ctx("a@1"), req)
	if r.GetStatus().GetCode() != v2.Code_OK || len(r.GetAssignments()) != 4 || r.GetAssignments()[3].GetMessageQueue().GetId() != 3 {
		t.Fatalf("orderly group: %v", r)
	}
	req.Group.Name = "bad group"
	if r, _ := f.c.QueryAssignment(f.ctx("a@1"), req); r.GetStatus().GetCode() != v2.Code_ILLEGAL_CONSUMER_GROUP {
		t.Errorf("bad group: %v", r)
	}
	req.Group.Name, req.Topic.Name = "cg_a", "%DLQ%none"
	if r, _ := f.c.QueryAssignment(f.ctx("a@1"), req); r.GetStatus().GetCode() != v2.Code_TOPIC_NOT_FOUND {
		t.Errorf("unknown topic: %v", r)
	}
}

// A read-only broker (brokerPermission 4) routes its queues READ, so v5
// producers send elsewhere (the proxy reads the masked perm from the name
// server); a receive there is FORBIDDEN once the broker is write-only.
func TestQueryRouteBrokerPermission(t *testing.T) {
	f := newFixture(t, nil, nil)
	topic, group := unique("drain"), unique("cg")
	f.createTopic(topic, 2, "")
	f.core.Broker.SetBrokerPermission(4)
	t.Cleanup(func() { f.core.Broker.SetBrokerPermission(6) })
	r, err := f.c.QueryRoute(f.ctx("r@1"), &v2.QueryRouteRequest{Topic: &v2.Resource{Name: topic}, Endpoints: accessPoint})
	if err != nil || r.GetStatus().GetCode() != v2.Code_OK || len(r.GetMessageQueues()) != 2 {
		t.Fatalf("%v %v", r, err)
	}
	for _, q := range r.GetMessageQueues() {
		if q.GetPermission() != v2.Permission_READ {
			t.Errorf("queue %d: %v, want READ", q.GetId(), q.GetPermission())
		}
	}
	f.core.Broker.SetBrokerPermission(2)
	if rr := f.receive(f.ctx("c@1"), simpleReceiveNoPoll(simpleReceive(group, topic, 0))); rr.status.GetCode() != v2.Code_FORBIDDEN {
		t.Errorf("receive from a write-only broker: %v", rr.status)
	}
}
