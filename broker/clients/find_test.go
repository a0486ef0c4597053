package clients

import (
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
)

// TestProducerChannel: a producer is found by client id across groups
// (the latest heartbeat's connection), a consumer-only client is not, and
// an expired or removed producer is not.
func TestProducerChannel(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	tab := NewClientTable(zerolog.Nop())
	tab.SetClock(func() time.Time { return now })
	tab.RegisterProducer("pg1", ClientChannel{ClientID: "10.0.0.1@a", ConnID: 1})
	now = now.Add(time.Second)
	tab.RegisterProducer("pg2", ClientChannel{ClientID: "10.0.0.1@a", ConnID: 2})
	tab.RegisterConsumer(ConsumerRegistration{Group: "cg"}, ClientChannel{ClientID: "10.0.0.2@b", ConnID: 3})

	ch, ok := tab.ProducerChannel("10.0.0.1@a")
	require.True(t, ok)
	require.Equal(t, uint64(2), ch.ConnID, "the latest heartbeat's connection")
	_, ok = tab.ProducerChannel("10.0.0.2@b")
	require.False(t, ok, "consumers are not looked at, as in ProducerManager.findChannel")
	_, ok = tab.ProducerChannel("nobody")
	require.False(t, ok)

	tab.RemoveConn(2)
	ch, ok = tab.ProducerChannel("10.0.0.1@a")
	require.True(t, ok)
	require.Equal(t, uint64(1), ch.ConnID)

	now = now.Add(ClientChannelExpiry + time.Second)
	_, ok = tab.ProducerChannel("10.0.0.1@a")
	require.False(t, ok, "expired")
}
