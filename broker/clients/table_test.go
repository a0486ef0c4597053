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
	assert.True(t, ct.Unregister("c3", "P", ""))
	assert.Equal(t, []string{"c3"}, ct.ConsumerIDs("G"))
	assert.True(t, ct.Unregister("c3", "", "G"))
	assert.Nil(t, ct.ConsumerIDs("G"))
	assert.False(t, ct.Unregister("c3", "P", "G"))
	assert.Empty(t, ct.ConsumerGroups())
}
