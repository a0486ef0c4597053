package handler_test

// The HEART_BEAT fast path over real TCP (heart_beat.go, heart_beat_cache.go,
// clients_refresh.go): an unchanged heartbeat on the same connection
// refreshes what the full path registered, with the same reply; anything
// else takes the full path.

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/broker/clients"
	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/handler"
	"github.com/popshim/popshim/stack"
)

// fakeClock is the ClientTable's clock in these tests, in Unix ms.
type fakeClock struct{ ms atomic.Int64 }

func newFakeClock() *fakeClock {
	f := &fakeClock{}
	f.ms.Store(fakeClockStart)
	return f
}

// fakeClockStart is where a fakeClock starts, Unix ms.
const fakeClockStart = int64(1_700_000_000_000)

func (f *fakeClock) now() time.Time          { return time.UnixMilli(f.ms.Load()) }
func (f *fakeClock) advance(d time.Duration) { f.ms.Add(d.Milliseconds()) }
func (f *fakeClock) millis() int64           { return f.ms.Load() }

// at is the clock's reading d after its start, Unix ms.
func (f *fakeClock) at(d time.Duration) int64 { return fakeClockStart + d.Milliseconds() }

// startClockHarness starts a stack (broker port only, two event loops)
// whose ClientTable runs on clock, set before the port accepts
// connections (stack.WithBeforeListen).
func startClockHarness(t *testing.T, clock *fakeClock, mutate func(*conf.Config)) *harness {
	t.Helper()
	return startHarnessWith(t, func(cfg *conf.Config) {
		cfg.EventLoops = 2
		if mutate != nil {
			mutate(cfg)
		}
	}, stack.WithBeforeListen(func(b *handler.Broker) { b.Clients.SetClock(clock.now) }))
}

// beatBody sends HEART_BEAT with exactly body and returns the reply.
func beatBody(t *testing.T, c *client.Conn, body []byte) *codec.Command {
	t.Helper()
	return call(t, c, codec.NewRequest(codec.RequestHeartBeat, 0, nil, body))
}

// replyFrame is resp as the broker wrote it, opaque zeroed so replies to
// different requests compare.
func replyFrame(resp *codec.Command) []byte {
	r := *resp
	r.Opaque = 0
	return codec.AppendFrame(nil, &r)
}

// fullPaths is how many heartbeats took the full path and were accepted.
func fullPaths(h *harness) int {
	_, n := h.b().HBCache().Stats()
	return n
}

// consumerChannel returns clientID's channel in consumer group group.
func consumerChannel(t *testing.T, h *harness, group, clientID string) clients.ClientChannel {
	t.Helper()
	info, ok := h.b().Clients.Consumer(group)
	require.True(t, ok, "group %s has no live consumer", group)
	for _, ch := range info.Channels {
		if ch.ClientID == clientID {
			return ch
		}
	}
	t.Fatalf("%s not in group %s", clientID, group)
	return clients.ClientChannel{}
}

// producerChannel returns clientID's channel in producer group group.
func producerChannel(t *testing.T, h *harness, group, clientID string) clients.ClientChannel {
	t.Helper()
	for _, ch := range h.b().Clients.ProducerChannels() {
		if ch.ClientID == clientID {
			return ch
		}
	}
	t.Fatalf("%s not a live producer", clientID)
	return clients.ClientChannel{}
}

// TestHB_FastPathRefreshes: a byte-identical second heartbeat on the same
// connection takes the fast path, answers the same bytes as the first,
// refreshes LastUpdateMillis of every group it lists (so they outlive the
// first heartbeat's expiry) and keeps registrations and settings.
func TestHB_FastPathRefreshes(t *testing.T) {
	clock := newFakeClock()
	h := startClockHarness(t, clock, nil)
	c := h.dial()
	const cid = "10.0.0.1@fast#1"
	body := codec.EncodeHeartbeatData(&codec.HeartbeatData{ClientID: cid,
		ProducerDataSet: []codec.ProducerData{{GroupName: "P1"}},
		ConsumerDataSet: []codec.ConsumerData{hbConsumer("G1", "T1"), hbConsumer("G2", "T2")}})

	first := beatBody(t, c, body)
	require.Equal(t, codec.Success, first.Code, first.Remark)
	require.Equal(t, 1, fullPaths(h))
	settings, ok := h.b().Clients.Consumer("G1")
	require.True(t, ok)
	for _, g := range []string{"G1", "G2"} {
		assert.Equal(t, clock.at(0), consumerChannel(t, h, g, cid).LastUpdateMillis, g)
	}
	assert.Equal(t, clock.at(0), producerChannel(t, h, "P1", cid).LastUpdateMillis)

	clock.advance(100 * time.Second)
	second := beatBody(t, c, body)
	require.Equal(t, codec.Success, second.Code, second.Remark)
	assert.Equal(t, 1, fullPaths(h), "the repeat took the full path")
	assert.Equal(t, replyFrame(first), replyFrame(second), "fast-path reply differs from the full path's")
	for _, g := range []string{"G1", "G2"} {
		ch := consumerChannel(t, h, g, cid)
		assert.Equal(t, clock.at(100*time.Second), ch.LastUpdateMillis, g)
	}
	assert.Equal(t, clock.at(100*time.Second), producerChannel(t, h, "P1", cid).LastUpdateMillis)
	again, ok := h.b().Clients.Consumer("G1")
	require.True(t, ok)
	assert.Equal(t, settings.Subscriptions, again.Subscriptions)
	assert.Equal(t, settings.ConsumeType, again.ConsumeType)

	// 130 s after the first heartbeat, 30 s after the refresh: alive only
	// because the fast path refreshed them.
	clock.advance(30 * time.Second)
	for _, g := range []string{"G1", "G2"} {
		assert.Equal(t, []string{cid}, consumerIDs(t, c, g), g)
		assert.True(t, topicExists(t, c, codec.RetryGroupTopic(g)), g)
		eventually(t, func() bool { _, stored := h.b().Store.Group(g); return stored }, "group %s not stored", g)
	}
	assert.Equal(t, 3, h.b().Clients.ConnChannels(connIDOf(t, h, cid)))
}

// connIDOf is the connection clientID's G1 registration came over.
func connIDOf(t *testing.T, h *harness, clientID string) uint64 {
	t.Helper()
	return consumerChannel(t, h, "G1", clientID).ConnID
}

// TestHB_ChangedBodyTakesFullPath: a heartbeat that differs from the last
// one on its connection (other groups, or the same body with another
// remoting version) runs the full path: the new group is registered, the
// dropped one stays until it expires (as RegisterHeartbeat leaves it), and
// the version is the new one. Another client rewriting a group's
// subscriptions is undone by an unchanged heartbeat, as the full path
// would (the last heartbeat wins).
func TestHB_ChangedBodyTakesFullPath(t *testing.T) {
	clock := newFakeClock()
	h := startClockHarness(t, clock, nil)
	c := h.dial()
	const cid = "10.0.0.1@chg#1"
	body1 := codec.EncodeHeartbeatData(&codec.HeartbeatData{ClientID: cid,
		ConsumerDataSet: []codec.ConsumerData{hbConsumer("G1", "T1"), hbConsumer("G2", "T1")}})
	body2 := codec.EncodeHeartbeatData(&codec.HeartbeatData{ClientID: cid,
		ConsumerDataSet: []codec.ConsumerData{hbConsumer("G1", "T1"), hbConsumer("G3", "T1")}})

	require.Equal(t, codec.Success, beatBody(t, c, body1).Code)
	clock.advance(60 * time.Second)
	resp := beatBody(t, c, body2)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	assert.Equal(t, 2, fullPaths(h))
	assert.Equal(t, []string{cid}, consumerIDs(t, c, "G3"))
	assert.Equal(t, []string{cid}, consumerIDs(t, c, "G2"), "the full path keeps a group a heartbeat stops listing")

	clock.advance(40 * time.Second)
	require.Equal(t, codec.Success, beatBody(t, c, body2).Code)
	assert.Equal(t, 2, fullPaths(h), "the repeat of body2 took the full path")
	clock.advance(21 * time.Second) // G2: 121 s since body1; G1, G3: 21 s since the repeat
	assert.Nil(t, consumerIDs(t, c, "G2"), "G2 was refreshed by a heartbeat not listing it")
	assert.Equal(t, []string{cid}, consumerIDs(t, c, "G1"))
	assert.Equal(t, []string{cid}, consumerIDs(t, c, "G3"))

	// Same body, another version: the full path, which records the version.
	req := codec.NewRequest(codec.RequestHeartBeat, 0, nil, body2)
	req.Version++
	resp = call(t, c, req)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	assert.Equal(t, 3, fullPaths(h))
	assert.Equal(t, req.Version, consumerChannel(t, h, "G1", cid).Version)

	// Another client on another connection gives G1 other subscriptions;
	// an unchanged heartbeat of cid puts its own back.
	c2 := h.dial()
	require.Equal(t, codec.Success, beat(t, c2, codec.HeartbeatData{ClientID: "10.0.0.2@chg#2",
		ConsumerDataSet: []codec.ConsumerData{hbConsumer("G1", "T9")}}).Code)
	info, _ := h.b().Clients.Consumer("G1")
	require.Contains(t, info.Subscriptions, "T9")
	resp = call(t, c, req)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	assert.Equal(t, 4, fullPaths(h), "c2's heartbeat took the full path, cid's repeat the fast one")
	info, _ = h.b().Clients.Consumer("G1")
	assert.Contains(t, info.Subscriptions, "T1")
	assert.NotContains(t, info.Subscriptions, "T9")
	assert.Len(t, info.Channels, 2)
}

// TestHB_FastPathAfterRemoval: an unchanged heartbeat whose registration is
// partly gone (UNREGISTER_CLIENT of one group, expiry, the clientID moved
// to another connection) takes the full path and registers everything
// again.
func TestHB_FastPathAfterRemoval(t *testing.T) {
	clock := newFakeClock()
	h := startClockHarness(t, clock, nil)
	c := h.dial()
	const cid = "10.0.0.1@gone#1"
	body := codec.EncodeHeartbeatData(&codec.HeartbeatData{ClientID: cid,
		ProducerDataSet: []codec.ProducerData{{GroupName: "P1"}},
		ConsumerDataSet: []codec.ConsumerData{hbConsumer("G1", "T1")}})
	require.Equal(t, codec.Success, beatBody(t, c, body).Code)
	conn := connIDOf(t, h, cid)

	for i, ext := range []map[string]string{
		{"clientID": cid, "consumerGroup": "G1"},
		{"clientID": cid, "producerGroup": "P1"},
	} {
		resp := call(t, c, codec.NewRequest(codec.RequestUnregisterClient, 0, ext, nil))
		require.Equal(t, codec.Success, resp.Code, resp.Remark)
		require.Equal(t, 1, h.b().Clients.ConnChannels(conn))
		require.Equal(t, codec.Success, beatBody(t, c, body).Code)
		assert.Equal(t, 2+i, fullPaths(h), "unregistered %v", ext)
		assert.Equal(t, []string{cid}, consumerIDs(t, c, "G1"))
		assert.Equal(t, clock.at(0), producerChannel(t, h, "P1", cid).LastUpdateMillis)
		assert.Equal(t, 2, h.b().Clients.ConnChannels(conn))
	}

	// Expired and swept: the repeat registers again.
	clock.advance(clients.ClientChannelExpiry + clients.SweepInterval + time.Second)
	require.Equal(t, codec.Success, beatBody(t, c, body).Code)
	assert.Equal(t, 4, fullPaths(h))
	assert.Equal(t, clock.millis(), consumerChannel(t, h, "G1", cid).LastUpdateMillis)
	assert.Equal(t, 2, h.b().Clients.ConnChannels(conn))

	// The clientID moves to another connection, then comes back unchanged.
	c2 := h.dial()
	require.Equal(t, codec.Success, beatBody(t, c2, body).Code)
	require.NotEqual(t, conn, connIDOf(t, h, cid))
	assert.Equal(t, 0, h.b().Clients.ConnChannels(conn))
	require.Equal(t, codec.Success, beatBody(t, c, body).Code)
	assert.Equal(t, 6, fullPaths(h))
	assert.Equal(t, conn, connIDOf(t, h, cid))
	assert.Equal(t, conn, producerChannel(t, h, "P1", cid).ConnID)
	assert.Equal(t, 2, h.b().Clients.ConnChannels(conn))
}
