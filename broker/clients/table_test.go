package clients

import (
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

func TestClientTableExpiryAndRemoval(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	ct := NewClientTable(zerolog.Nop())
	ct.SetClock(func() time.Time { return now })
	reg := ConsumerRegistration{Group: "G", ConsumeType: codec.ConsumePassively, MessageModel: codec.MessageModelCluster,
		Subscriptions: []Subscription{{Topic: "T", SubString: "*"}}}

	assert.True(t, ct.RegisterConsumer(reg, ClientChannel{ClientID: "c2", ConnID: 2}))
	assert.True(t, ct.RegisterConsumer(reg, ClientChannel{ClientID: "c1", ConnID: 1}))
	assert.False(t, ct.RegisterConsumer(reg, ClientChannel{ClientID: "c1", ConnID: 1}), "second heartbeat is not new")
	ct.RegisterProducer("P", ClientChannel{ClientID: "c1", ConnID: 1})
	assert.Equal(t, []string{"c1", "c2"}, ct.ConsumerIDs("G"))
	p, c := ct.Counts()
	assert.Equal(t, 1, p)
	assert.Equal(t, 2, c)
	assert.Len(t, ct.ProducerChannels(), 1)

	// c2 goes silent; c1 keeps heartbeating. Exactly at 120 s c2 is alive,
	// one millisecond later it is gone.
	now = now.Add(60 * time.Second)
	ct.RegisterConsumer(reg, ClientChannel{ClientID: "c1", ConnID: 1})
	now = now.Add(60 * time.Second)
	assert.Equal(t, []string{"c1", "c2"}, ct.ConsumerIDs("G"))
	now = now.Add(time.Millisecond)
	assert.Equal(t, []string{"c1"}, ct.ConsumerIDs("G"))
	info, ok := ct.Consumer("G")
	require.True(t, ok)
	assert.Len(t, info.Channels, 1)
	assert.Equal(t, "*", info.Subscriptions["T"].SubString)

	// Connection 1 closes: c1 leaves the group and the producer group.
	assert.Equal(t, []string{"G"}, ct.RemoveConn(1))
	assert.Nil(t, ct.ConsumerIDs("G"))
	p, _ = ct.Counts()
	assert.Equal(t, 0, p)

	// Unregister removes only what it names.
	ct.RegisterConsumer(reg, ClientChannel{ClientID: "c3", ConnID: 3})
	ct.RegisterProducer("P", ClientChannel{ClientID: "c3", ConnID: 3})
	pr, cr := ct.Unregister("c3", "P", "")
	assert.True(t, pr)
	assert.False(t, cr)
	assert.Equal(t, []string{"c3"}, ct.ConsumerIDs("G"))
	pr, cr = ct.Unregister("c3", "", "G")
	assert.False(t, pr)
	assert.True(t, cr)
	assert.Nil(t, ct.ConsumerIDs("G"))
	pr, cr = ct.Unregister("c3", "P", "G")
	assert.False(t, pr || cr)
	assert.Empty(t, ct.ConsumerGroups())
}

// regErr drops RegisterHeartbeat's changed groups, for tests about its error.
func regErr(_ []string, err error) error { return err }

// first is the first of two results (Unregister's producerRemoved).
func first(a, _ bool) bool { return a }

// TestRegisterHeartbeatReportsChangedGroups: the groups a heartbeat changes
// are those RocketMQ's ConsumerManager.registerConsumer notifies (a new
// member, a member on a new connection, a subscribed topic added or
// removed); a repeat, or a new expression for the same topics, changes
// nothing.
func TestRegisterHeartbeatReportsChangedGroups(t *testing.T) {
	ct := NewClientTable(zerolog.Nop())
	reg := func(group string, topics ...string) ConsumerRegistration {
		r := ConsumerRegistration{Group: group, MessageModel: codec.MessageModelCluster}
		for _, tp := range topics {
			r.Subscriptions = append(r.Subscriptions, Subscription{Topic: tp, SubString: "*"})
		}
		return r
	}
	hb := func(id string, conn uint64, regs ...ConsumerRegistration) Heartbeat {
		return Heartbeat{Channel: ClientChannel{ClientID: id, ConnID: conn}, Consumers: regs, Producers: []string{"P"}}
	}
	steps := []struct {
		name string
		hb   Heartbeat
		want []string
	}{
		{"first member of two groups", hb("c1", 1, reg("G2", "T"), reg("G1", "T")), []string{"G1", "G2"}},
		{"repeat", hb("c1", 1, reg("G2", "T"), reg("G1", "T")), nil},
		{"second member of G1", hb("c2", 2, reg("G1", "T")), []string{"G1"}},
		{"repeat of the second", hb("c2", 2, reg("G1", "T")), nil},
		{"c1 reconnects", hb("c1", 3, reg("G2", "T"), reg("G1", "T")), []string{"G1", "G2"}},
		{"G2 subscribes another topic", hb("c1", 3, reg("G2", "T", "U"), reg("G1", "T")), []string{"G2"}},
		{"G2 drops it again", hb("c1", 3, reg("G2", "T"), reg("G1", "T")), []string{"G2"}},
	}
	for _, s := range steps {
		got, err := ct.RegisterHeartbeat(s.hb, 0)
		require.NoError(t, err, s.name)
		assert.Equal(t, s.want, got, s.name)
	}
	tag := reg("G1", "T")
	tag.Subscriptions[0].SubString = "TagA"
	got, err := ct.RegisterHeartbeat(hb("c2", 2, tag), 0)
	require.NoError(t, err)
	assert.Nil(t, got, "a new expression of a subscribed topic")
}
