package handler_test

// Edges of the HEART_BEAT fast path: what is never remembered (refused,
// malformed, oversized heartbeats), that a closed connection leaves no
// entry, concurrent connections on two event loops, and the table-level
// comparison of a group's settings.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/broker/clients"
	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
)

// cacheEntries is how many connections have a remembered heartbeat.
func cacheEntries(h *harness) int {
	n, _ := h.b().HBCache().Stats()
	return n
}

// TestHB_RefusedNotCached: a heartbeat refused by a bound, or malformed, is
// not remembered and drops the connection's earlier entry; its repeat is
// refused again; the earlier heartbeat then takes the full path.
func TestHB_RefusedNotCached(t *testing.T) {
	h := startClockHarness(t, newFakeClock(), func(c *conf.Config) {
		c.MaxConnClientChannels = 2
		c.MaxHeartbeatGroups = 3
	})
	c := h.dial()
	const cid = "10.0.0.1@ref#1"
	ok := codec.EncodeHeartbeatData(&codec.HeartbeatData{ClientID: cid,
		ConsumerDataSet: []codec.ConsumerData{hbConsumer("G1", "T"), hbConsumer("G2", "T")}})
	overConn := codec.EncodeHeartbeatData(&codec.HeartbeatData{ClientID: cid,
		ConsumerDataSet: []codec.ConsumerData{hbConsumer("G1", "T"), hbConsumer("G2", "T"), hbConsumer("G3", "T")}})
	overGroups := codec.EncodeHeartbeatData(&codec.HeartbeatData{ClientID: cid,
		ConsumerDataSet: []codec.ConsumerData{hbConsumer("G1", "T"), hbConsumer("G2", "T"), hbConsumer("G3", "T"), hbConsumer("G4", "T")}})

	for i, refused := range []struct {
		body []byte
		code int32
	}{{overConn, codec.InvalidParameter}, {overGroups, codec.InvalidParameter}, {[]byte("{not json"), codec.SystemError}} {
		require.Equal(t, codec.Success, beatBody(t, c, ok).Code)
		require.Equal(t, 1, cacheEntries(h))
		require.Equal(t, 1+i, fullPaths(h))
		first := beatBody(t, c, refused.body)
		require.Equal(t, refused.code, first.Code, first.Remark)
		assert.Equal(t, 0, cacheEntries(h), "refused heartbeat %d left an entry", i)
		again := beatBody(t, c, refused.body)
		assert.Equal(t, replyFrame(first), replyFrame(again), "repeat of refused heartbeat %d", i)
		assert.Equal(t, 0, cacheEntries(h))
		assert.Nil(t, consumerIDs(t, c, "G3"))
	}
	require.Equal(t, codec.Success, beatBody(t, c, ok).Code)
	assert.Equal(t, 4, fullPaths(h), "after a refusal the accepted body takes the full path")
	assert.Equal(t, 1, cacheEntries(h))
}

// TestHB_OversizedNotCached: a heartbeat body above maxCachedHeartbeatBytes
// is served by the full path every time and never remembered.
func TestHB_OversizedNotCached(t *testing.T) {
	h := startClockHarness(t, newFakeClock(), nil)
	c := h.dial()
	var topics []string
	for i := range 200 {
		topics = append(topics, fmt.Sprintf("Topic_%03d_%s", i, strings.Repeat("x", 20)))
	}
	body := codec.EncodeHeartbeatData(&codec.HeartbeatData{ClientID: "10.0.0.1@big#1",
		ConsumerDataSet: []codec.ConsumerData{hbConsumer("G1", topics...)}})
	require.Greater(t, len(body), clients.MaxCachedHeartbeatBytes)
	for i := range 3 {
		resp := beatBody(t, c, body)
		require.Equal(t, codec.Success, resp.Code, resp.Remark)
		assert.Equal(t, i+1, fullPaths(h))
		assert.Equal(t, 0, cacheEntries(h))
	}
	info, ok := h.b().Clients.Consumer("G1")
	require.True(t, ok)
	assert.Len(t, info.Subscriptions, 201)
}

// TestHB_CloseDropsEntry: closing a connection removes its remembered
// heartbeat (the map does not grow with connections that came and went).
func TestHB_CloseDropsEntry(t *testing.T) {
	h := startClockHarness(t, newFakeClock(), nil)
	var clients []*client.Conn
	for i := range 4 {
		c := h.dial()
		clients = append(clients, c)
		require.Equal(t, codec.Success, beat(t, c, codec.HeartbeatData{ClientID: fmt.Sprintf("10.0.0.1@close#%d", i),
			ProducerDataSet: []codec.ProducerData{{GroupName: "P"}}}).Code)
	}
	require.Equal(t, 4, cacheEntries(h))
	for i, c := range clients {
		require.NoError(t, c.Close())
		want := len(clients) - 1 - i
		eventually(t, func() bool { return cacheEntries(h) == want }, "entries after %d closes: %d, want %d", i+1, cacheEntries(h), want)
	}
	assert.Empty(t, h.b().Clients.ProducerChannels())
}

// TestHB_FastPathConcurrent: connections spread over two event loops send
// unchanged and changed heartbeats while another connection unregisters
// their groups; every heartbeat is answered SUCCESS, each connection ends
// registered with an entry, and closing them all leaves none (run with
// -race).
func TestHB_FastPathConcurrent(t *testing.T) {
	h := startClockHarness(t, newFakeClock(), nil)
	const conns, rounds = 6, 60
	bodies := func(i int) [2][]byte {
		cid := fmt.Sprintf("10.0.0.1@conc#%d", i)
		return [2][]byte{
			codec.EncodeHeartbeatData(&codec.HeartbeatData{ClientID: cid,
				ConsumerDataSet: []codec.ConsumerData{hbConsumer("G", "T")}}),
			codec.EncodeHeartbeatData(&codec.HeartbeatData{ClientID: cid,
				ConsumerDataSet: []codec.ConsumerData{hbConsumer("G", "T"), hbConsumer(fmt.Sprintf("G%d", i), "T")}}),
		}
	}
	clients := make([]*client.Conn, conns)
	for i := range clients {
		clients[i] = h.dial()
	}
	admin := h.dial()
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := bodies(i)
			for r := range rounds {
				body := b[0]
				if r%10 == 9 {
					body = b[1]
				}
				if err := beatOK(c, body); err != nil {
					t.Errorf("conn %d round %d: %v", i, r, err)
					return
				}
			}
		}()
	}
	for r := range rounds {
		ext := map[string]string{"clientID": fmt.Sprintf("10.0.0.1@conc#%d", r%conns), "consumerGroup": "G"}
		require.Equal(t, codec.Success, call(t, admin, codec.NewRequest(codec.RequestUnregisterClient, 0, ext, nil)).Code)
	}
	wg.Wait()
	for i, c := range clients { // one unchanged heartbeat after the unregisters re-registers each
		require.Equal(t, codec.Success, beatBody(t, c, bodies(i)[0]).Code)
	}
	assert.Len(t, consumerIDs(t, admin, "G"), conns)
	assert.Equal(t, conns, cacheEntries(h))
	for _, c := range clients {
		require.NoError(t, c.Close())
	}
	eventually(t, func() bool { return cacheEntries(h) == 0 }, "entries left after closing: %d", cacheEntries(h))
}

// TestHB_DuplicateTopicFastPath: a heartbeat naming a topic twice in one
// group registers it once; after another client's heartbeat changed the
// group's subscriptions, the unchanged repeat puts back exactly its own.
func TestHB_DuplicateTopicFastPath(t *testing.T) {
	h := startClockHarness(t, newFakeClock(), nil)
	c, c2 := h.dial(), h.dial()
	cd := hbConsumer("G", "A")
	cd.SubscriptionDataSet = append(cd.SubscriptionDataSet, cd.SubscriptionDataSet[0]) // A, %RETRY%G, A
	body := codec.EncodeHeartbeatData(&codec.HeartbeatData{ClientID: "10.0.0.1@dup#1", ConsumerDataSet: []codec.ConsumerData{cd}})
	require.Equal(t, codec.Success, beatBody(t, c, body).Code)
	info, ok := h.b().Clients.Consumer("G")
	require.True(t, ok)
	want := info.Subscriptions
	require.Len(t, want, 2)

	other := hbConsumer("G", "A", "B")
	require.Equal(t, codec.Success, beat(t, c2, codec.HeartbeatData{ClientID: "10.0.0.2@dup#2",
		ConsumerDataSet: []codec.ConsumerData{other}}).Code)
	info, _ = h.b().Clients.Consumer("G")
	require.Len(t, info.Subscriptions, 3)
	require.Equal(t, codec.Success, beatBody(t, c, body).Code)
	require.Equal(t, 2, fullPaths(h), "the repeat took the full path")
	info, _ = h.b().Clients.Consumer("G")
	assert.Equal(t, want, info.Subscriptions)
}

// beatOK sends HEART_BEAT with body and errors unless it is answered
// SUCCESS (usable off the test goroutine).
func beatOK(c *client.Conn, body []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	resp, err := c.Invoke(ctx, codec.NewRequest(codec.RequestHeartBeat, 0, nil, body))
	if err != nil {
		return err
	}
	if resp.Code != codec.Success {
		return fmt.Errorf("code %d: %s", resp.Code, resp.Remark)
	}
	return nil
}
