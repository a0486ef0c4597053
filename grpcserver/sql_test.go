package grpcserver

import (
	"testing"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
)

// A ReceiveMessage with an SQL92 filter (MessageSelector.bySql) gets only
// the messages whose properties match it (--enable-property-filter, on by
// default); the others stay for other subscriptions.
func TestReceiveSQL92Filter(t *testing.T) {
	f := newFixture(t, nil, nil)
	topic, group := unique("sql"), unique("cg")
	f.createTopic(topic, 1, "")
	for _, region := range []string{"eu", "us", "eu", "ap"} {
		m := message(topic, "to "+region, "T")
		m.UserProperties = map[string]string{"region": region}
		f.send("p@1", m)
	}
	req := simpleReceive(group, topic, 0)
	req.FilterExpression = &v2.FilterExpression{Type: v2.FilterType_SQL, Expression: "region = 'eu' AND TAGS = 'T'"}
	got := f.receiveN("c@1", req, 2, 5)
	for _, m := range got {
		if m.GetUserProperties()["region"] != "eu" || string(m.GetBody()) != "to eu" {
			t.Errorf("filter let through %v", m)
		}
	}
	// Nothing more matches.
	if r := f.receive(f.ctx("c@1"), req); len(r.msgs) != 0 || r.status.GetCode() != v2.Code_MESSAGE_NOT_FOUND {
		t.Errorf("after the matches: %d messages, %v", len(r.msgs), r.status)
	}
}
