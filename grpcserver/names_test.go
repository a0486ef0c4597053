package grpcserver

import (
	"errors"
	"strings"
	"testing"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/popshim/popshim/codec"
)

// System topics and system consumer groups are refused by every RPC that
// names them, as rocketmq-proxy 5.5.0's GrpcValidator refuses them:
// ILLEGAL_TOPIC "cannot access system topic", ILLEGAL_CONSUMER_GROUP
// "cannot use system consumer group". Ordinary names with the same
// letters in other places still pass.
func TestSystemNamesRefused(t *testing.T) {
	f := newFixture(t, nil, nil)
	const id = "sys@1"
	topic, group := unique("plain"), unique("cg")
	f.createTopic(topic, 1, "")

	type check struct {
		name string
		call func(topic, group string) *v2.Status
	}
	res := func(n string) *v2.Resource { return &v2.Resource{Name: n} }
	checks := []check{
		{"QueryRoute", func(tp, _ string) *v2.Status {
			r, _ := f.c.QueryRoute(f.ctx(id), &v2.QueryRouteRequest{Topic: res(tp), Endpoints: accessPoint})
			return r.GetStatus()
		}},
		{"SendMessage", func(tp, _ string) *v2.Status {
			r, _ := f.c.SendMessage(f.ctx(id), &v2.SendMessageRequest{Messages: []*v2.Message{message(tp, "b", "T")}})
			return r.GetStatus()
		}},
		{"QueryAssignment", func(tp, g string) *v2.Status {
			r, _ := f.c.QueryAssignment(f.ctx(id), &v2.QueryAssignmentRequest{Topic: res(tp), Group: res(g), Endpoints: accessPoint})
			return r.GetStatus()
		}},
		{"ReceiveMessage", func(tp, g string) *v2.Status {
			return f.receive(f.ctx(id), simpleReceive(g, tp, 0)).status
		}},
		{"AckMessage", func(tp, g string) *v2.Status {
			r, _ := f.c.AckMessage(f.ctx(id), &v2.AckMessageRequest{Topic: res(tp), Group: res(g),
				Entries: []*v2.AckMessageEntry{{MessageId: "01AB", ReceiptHandle: "x"}}})
			return r.GetStatus()
		}},
		{"ChangeInvisibleDuration", func(tp, g string) *v2.Status {
			r, _ := f.c.ChangeInvisibleDuration(f.ctx(id), &v2.ChangeInvisibleDurationRequest{Topic: res(tp), Group: res(g),
				MessageId: "01AB", ReceiptHandle: "x"})
			return r.GetStatus()
		}},
		{"Heartbeat", func(_, g string) *v2.Status {
			r, _ := f.c.Heartbeat(f.ctx(id), &v2.HeartbeatRequest{Group: res(g), ClientType: v2.ClientType_SIMPLE_CONSUMER})
			return r.GetStatus()
		}},
	}
	usesTopic := map[string]bool{"QueryRoute": true, "SendMessage": true, "QueryAssignment": true,
		"ReceiveMessage": true, "AckMessage": true, "ChangeInvisibleDuration": true}
	usesGroup := map[string]bool{"QueryAssignment": true, "ReceiveMessage": true, "AckMessage": true,
		"ChangeInvisibleDuration": true, "Heartbeat": true}

	for _, sys := range []string{"TBW102", "SCHEDULE_TOPIC_XXXX", "TRANS_CHECK_MAX_TIME_TOPIC",
		"RMQ_SYS_TRANS_HALF_TOPIC", "RMQ_SYS_TRACE_TOPIC", "rmq_sys_REVIVE_LOG_x", "BenchmarkTest"} {
		for _, c := range checks {
			if !usesTopic[c.name] {
				continue
			}
			st := c.call(sys, group)
			if st.GetCode() != v2.Code_ILLEGAL_TOPIC || st.GetMessage() != "cannot access system topic" {
				t.Errorf("%s on topic %s: %v", c.name, sys, st)
			}
		}
	}
	for _, sys := range []string{"CID_RMQ_SYS_TRANS", "CID_RMQ_SYS_x"} {
		for _, c := range checks {
			if !usesGroup[c.name] {
				continue
			}
			st := c.call(topic, sys)
			if st.GetCode() != v2.Code_ILLEGAL_CONSUMER_GROUP || st.GetMessage() != "cannot use system consumer group" {
				t.Errorf("%s with group %s: %v", c.name, sys, st)
			}
		}
	}
	// Not system names: the checks above do not refuse them.
	for _, c := range checks {
		st := c.call(topic, "my_CID_RMQ_SYS_group")
		if st.GetCode() == v2.Code_ILLEGAL_TOPIC || st.GetCode() == v2.Code_ILLEGAL_CONSUMER_GROUP {
			t.Errorf("%s on %s: %v", c.name, topic, st)
		}
	}
}

// Bad names are refused with the texts of the proxy's checks
// (Validators.checkTopic / checkGroup), and still wrap codec.ErrBadName.
func TestNameErrorsWordedAsProxy(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{validateTopic(""), "The specified topic is blank"},
		{validateTopic("   "), "The specified topic is blank"},
		{validateTopic(strings.Repeat("t", 128)), "The specified topic is longer than topic max length 127."},
		{validateTopic("主题"), "The specified topic[主题] contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"},
		{validateTopic("a b"), "The specified topic[a b] contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"},
		{validateGroup(""), "the specified group is blank"},
		{validateGroup(strings.Repeat("g", codec.MaxGroupLength+1)), "the specified group is longer than group max length 120."},
		{validateGroup("组"), "the specified group[组] contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"},
		{validateTopic("TBW102"), "cannot access system topic"},
	} {
		if tc.err == nil || tc.err.Error() != tc.want {
			t.Errorf("got %v, want %q", tc.err, tc.want)
		}
	}
	if err := validateTopic("a b"); !errors.Is(err, codec.ErrBadName) {
		t.Errorf("%v does not wrap codec.ErrBadName", err)
	}
	if validateTopic("ok_Topic-1") != nil || validateGroup("ok_Group-1") != nil {
		t.Error("a legal name was refused")
	}
}
