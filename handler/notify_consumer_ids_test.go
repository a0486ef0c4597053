package handler_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// noticeClient dials h with a client that records every
// NOTIFY_CONSUMER_IDS_CHANGED (40) the broker sends it, by consumer group.
func noticeClient(t *testing.T, h *harness) (*client.Conn, <-chan *codec.Command) {
	t.Helper()
	seen := make(chan *codec.Command, 64)
	c, err := client.DialContext(context.Background(), h.addr(), client.Options{OnRequest: func(req *codec.Command) *codec.Command {
		seen <- req
		return nil
	}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c, seen
}

// nextNotice waits (bounded) for the next request on seen and checks that
// it is a oneway NOTIFY_CONSUMER_IDS_CHANGED for group.
func nextNotice(t *testing.T, seen <-chan *codec.Command, group, why string) {
	t.Helper()
	select {
	case req := <-seen:
		require.Equal(t, codec.RequestNotifyConsumerIDsChanged, req.Code, why)
		assert.True(t, req.Flag&codec.FlagOneway != 0, "%s: not oneway", why)
		h, err := codec.DecodeConsumerGroupHeader(req.ExtFields)
		require.NoError(t, err, why)
		assert.Equal(t, group, h.ConsumerGroup, why)
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no NOTIFY_CONSUMER_IDS_CHANGED for %s within 10 s", why, group)
	}
}

// TestNotifyConsumerIDsChanged: as a Java broker's ConsumerManager and
// DefaultConsumerIdsChangeListener, every member of a clustering group
// gets NOTIFY_CONSUMER_IDS_CHANGED (40, oneway, header consumerGroup) when
// a member joins (the newcomer included), leaves with UNREGISTER_CLIENT
// or its connection closes; a repeated heartbeat sends nothing, nor does a
// change in a BROADCASTING group or in a group created with
// notifyConsumerIdsChangedEnable=false. "Nothing" is checked by order: a
// connection's frames arrive in the order the broker queued them, and the
// notice of a later change arrives next.
func TestNotifyConsumerIDsChanged(t *testing.T) {
	h := startHarness(t, nil)
	first, seen1 := noticeClient(t, h)
	second, seen2 := noticeClient(t, h)
	hb := func(c *client.Conn, body []byte) {
		t.Helper()
		resp := d2Call(t, c, codec.RequestHeartBeat, nil, body)
		require.Equal(t, codec.Success, resp.Code, resp.Remark)
	}

	hb(first, heartbeatBody("10.0.0.1@first", "GN"))
	nextNotice(t, seen1, "GN", "first member joins")
	hb(first, heartbeatBody("10.0.0.1@first", "GN"))
	hb(second, heartbeatBody("10.0.0.2@second", "GN"))
	nextNotice(t, seen1, "GN", "second member joins (the first's repeat sent nothing before it)")
	nextNotice(t, seen2, "GN", "the newcomer is told too")

	resp := d2Call(t, second, codec.RequestUnregisterClient, map[string]string{"clientID": "10.0.0.2@second", "consumerGroup": "GN"}, nil)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	nextNotice(t, seen1, "GN", "UNREGISTER_CLIENT of the second")

	// A group that asks not to be notified, and a broadcasting one: no
	// notice; then a change of GN is the next thing the first client sees.
	cfg := codec.NewSubscriptionGroupConfig("GQuiet")
	cfg.NotifyConsumerIDsChangedEnable = false
	resp = putGroup(t, first, cfg)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	hb(first, heartbeatBody("10.0.0.1@first", "GN", "GQuiet"))
	hb(second, heartbeatBody("10.0.0.2@second", "GQuiet"))
	bc := codec.HeartbeatData{ClientID: "10.0.0.1@first"}
	for _, id := range []string{"10.0.0.1@first", "10.0.0.2@second"} {
		bc.ClientID = id
		bc.ConsumerDataSet = []codec.ConsumerData{{GroupName: "GCast", ConsumeType: codec.ConsumePassively,
			MessageModel: codec.MessageModelBroadcst, ConsumeFromWhere: "CONSUME_FROM_LAST_OFFSET",
			SubscriptionDataSet: []codec.SubscriptionData{{Topic: "TopicH", SubString: "*", ExpressionType: "TAG"}}}}
		c := first
		if id != "10.0.0.1@first" {
			c = second
		}
		hb(c, codec.EncodeHeartbeatData(&bc))
	}
	hb(second, heartbeatBody("10.0.0.2@second", "GN"))
	nextNotice(t, seen1, "GN", "second rejoins GN; nothing for GQuiet or GCast came before")
	nextNotice(t, seen2, "GN", "the second is told of its own join")

	// The second's connection closes: the first is told.
	require.NoError(t, second.Close())
	nextNotice(t, seen1, "GN", "the second's connection closed")
}
