package broker_test

import (
	"slices"
	"testing"

	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/broker/clients"
	"github.com/popshim/popshim/codec"
)

// A PULL parked with the group's registered selector (no sysFlag 0x4, as
// a push consumer pulls) and woken after the consumer registered another
// one filters with the new selector: a message only the old one matches
// is NO_MATCHED_MESSAGE (20), as a Java broker's re-run of the woken
// request answers; the next PULL gets the message the new one matches.
// Before, the woken PULL delivered the stale message.
func TestCorePullWokenTakesNewSubscription(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicW", 1)
	register := func(sql string) {
		f.Broker.Clients.RegisterConsumer(clients.ConsumerRegistration{Group: "GroupW", ConsumeType: "CONSUME_PASSIVELY",
			MessageModel: "CLUSTERING", Subscriptions: []clients.Subscription{
				{Topic: "TopicW", SubString: sql, ExpressionType: "SQL92"}}},
			clients.ClientChannel{ClientID: "127.0.0.1@w", ConnID: 1})
	}
	register("a < 5")
	r := pullReq("GroupW", "TopicW", 0, 0)
	r.SysFlag = codec.PullSysFlagSuspend
	r.SuspendTimeoutMillis = 30_000
	got := pullParked(f, r)
	register("a >= 5")
	appendProps(t, f, "TopicW", 0, pmsg("old-only", "a", "0"))
	a := <-got
	wantPull(t, a.r, a.err, codec.PullRetryImmediately, "NO_MATCHED_MESSAGE", 1, 0, 1)

	appendProps(t, f, "TopicW", 0, pmsg("new", "a", "7"))
	r = pullReq("GroupW", "TopicW", 0, 1)
	r.SysFlag = 0
	res, err := pull(t, f, r)
	wantPull(t, res, err, codec.Success, "FOUND", 2, 0, 2)
	if b := bodiesOf(t, res.Body); !slices.Equal(b, []string{"new"}) {
		t.Fatalf("pulled %v, want [new]", b)
	}
}
