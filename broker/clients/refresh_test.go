package clients

import (
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClientTableRefreshHeartbeat: RefreshHeartbeat refreshes only what is
// still held over the connection, puts back a group's settings another
// heartbeat changed, and (with normalized subscriptions) is not fooled by a
// heartbeat naming one topic twice.
func TestClientTableRefreshHeartbeat(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	ct := NewClientTable(zerolog.Nop())
	ct.SetClock(func() time.Time { return now })
	sub := func(topic, expr string) Subscription { return Subscription{Topic: topic, SubString: expr} }
	dupReg := ConsumerRegistration{Group: "G", Subscriptions: []Subscription{sub("A", "*"), sub("A", "*")}}
	hb := Heartbeat{Channel: ClientChannel{ClientID: "c1", ConnID: 1}, Consumers: []ConsumerRegistration{dupReg}, Producers: []string{"P"}}
	require.NoError(t, regErr(ct.RegisterHeartbeat(hb, 0)))
	norm := hb
	norm.Consumers = []ConsumerRegistration{dupReg}
	norm.Consumers[0].Subscriptions = normalizeSubscriptions(dupReg.Subscriptions)
	require.Len(t, norm.Consumers[0].Subscriptions, 1)

	// Another client leaves G with topics A and B; c1's refresh must put
	// back {A} alone, although both its entries match A.
	require.NoError(t, regErr(ct.RegisterHeartbeat(Heartbeat{Channel: ClientChannel{ClientID: "c2", ConnID: 2},
		Consumers: []ConsumerRegistration{{Group: "G", Subscriptions: []Subscription{sub("A", "*"), sub("B", "*")}}}}, 0)))
	now = now.Add(time.Minute)
	require.True(t, ct.RefreshHeartbeat(&norm))
	info, ok := ct.Consumer("G")
	require.True(t, ok)
	assert.Equal(t, map[string]Subscription{"A": sub("A", "*")}, info.Subscriptions)
	assert.Equal(t, now.UnixMilli(), info.Channels[0].LastUpdateMillis) // c1 sorts first
	assert.Equal(t, 2, ct.ConnChannels(1))

	// The producer registration is gone: no refresh, nothing refreshed.
	require.True(t, first(ct.Unregister("c1", "P", "")))
	before := now.UnixMilli()
	now = now.Add(time.Minute)
	require.False(t, ct.RefreshHeartbeat(&norm))
	info, _ = ct.Consumer("G")
	assert.Equal(t, before, info.Channels[0].LastUpdateMillis)

	// A producer membership that moved to another connection: no refresh,
	// the count stays with the new connection.
	pOnly := Heartbeat{Channel: ClientChannel{ClientID: "c3", ConnID: 3}, Producers: []string{"Q"}}
	require.NoError(t, regErr(ct.RegisterHeartbeat(pOnly, 0)))
	require.True(t, ct.RefreshHeartbeat(&pOnly))
	moved := pOnly
	moved.Channel.ConnID = 4
	require.NoError(t, regErr(ct.RegisterHeartbeat(moved, 0)))
	require.False(t, ct.RefreshHeartbeat(&pOnly))
	assert.Equal(t, 0, ct.ConnChannels(3))
	assert.Equal(t, 1, ct.ConnChannels(4))
	assert.Equal(t, uint64(4), ct.ProducerChannels()[0].ConnID)

	// Last entry of a topic wins, first-seen order kept.
	got := normalizeSubscriptions([]Subscription{sub("A", "a1"), sub("B", "b"), sub("A", "a2")})
	assert.Equal(t, []Subscription{sub("A", "a2"), sub("B", "b")}, got)
}
