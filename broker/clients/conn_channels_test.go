package clients

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func hbReg(group string) ConsumerRegistration {
	return ConsumerRegistration{Group: group, Subscriptions: []Subscription{{Topic: "T", SubString: "*"}}}
}

// TestClientTableConnChannelAccounting: the per-connection channel count
// follows every way a channel comes and goes (heartbeat, move to another
// connection, UNREGISTER_CLIENT, connection close, expiry), and
// RegisterHeartbeat refuses, all or nothing, what would exceed the bound.
func TestClientTableConnChannelAccounting(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	ct := NewClientTable(zerolog.Nop())
	ct.SetClock(func() time.Time { return now })

	hb := Heartbeat{Channel: ClientChannel{ClientID: "c1", ConnID: 1},
		Consumers: []ConsumerRegistration{hbReg("G1"), hbReg("G2"), hbReg("G1")}, // G1 twice counts once
		Producers: []string{"P", "P"}}
	require.NoError(t, regErr(ct.RegisterHeartbeat(hb, 3)))
	assert.Equal(t, 3, ct.ConnChannels(1))
	require.NoError(t, regErr(ct.RegisterHeartbeat(hb, 3)), "a refresh adds nothing")
	assert.Equal(t, 3, ct.ConnChannels(1))

	_, err := ct.RegisterHeartbeat(Heartbeat{Channel: ClientChannel{ClientID: "c1", ConnID: 1},
		Consumers: []ConsumerRegistration{hbReg("G1"), hbReg("G3")}}, 3)
	var lim *ConnChannelLimitError
	require.ErrorAs(t, err, &lim)
	assert.True(t, errors.Is(err, ErrConnChannelLimit))
	assert.Equal(t, ConnChannelLimitError{ConnID: 1, Held: 3, Adding: 1, Limit: 3}, *lim)
	assert.Nil(t, ct.ConsumerIDs("G3"), "refused heartbeat registered G3")
	assert.Equal(t, 3, ct.ConnChannels(1))

	// c1 reconnects on connection 2: its G1 channel moves with it.
	require.NoError(t, regErr(ct.RegisterHeartbeat(Heartbeat{Channel: ClientChannel{ClientID: "c1", ConnID: 2},
		Consumers: []ConsumerRegistration{hbReg("G1")}}, 3)))
	assert.Equal(t, 2, ct.ConnChannels(1))
	assert.Equal(t, 1, ct.ConnChannels(2))

	assert.True(t, first(ct.Unregister("c1", "P", "")))
	assert.Equal(t, 1, ct.ConnChannels(1))
	assert.Equal(t, []string{"G2"}, ct.RemoveConn(1))
	assert.Equal(t, 0, ct.ConnChannels(1))
	assert.Equal(t, 1, ct.ConnChannels(2))

	// Expiry: connection 2's channel goes silent past 120 s; the next
	// registration sweeps it.
	now = now.Add(ClientChannelExpiry + SweepInterval + time.Millisecond)
	require.NoError(t, regErr(ct.RegisterHeartbeat(Heartbeat{Channel: ClientChannel{ClientID: "c9", ConnID: 9}, Producers: []string{"P9"}}, 3)))
	assert.Equal(t, 0, ct.ConnChannels(2))
	assert.Equal(t, 1, ct.ConnChannels(9))
	p, c := ct.Counts()
	assert.Equal(t, 1, p)
	assert.Equal(t, 0, c)
}

// ClipLog keeps short names as they are and cuts long ones on a rune
// boundary, without adding quotes (zerolog quotes the field).
func TestClipLog(t *testing.T) {
	require.Equal(t, "cidA", ClipLog("cidA"))
	long := strings.Repeat("a", 63) + "é" + strings.Repeat("b", 10) // é spans bytes 63-64
	got := ClipLog(long)
	require.Equal(t, strings.Repeat("a", 63)+"…", got)
	require.True(t, utf8.ValidString(got))
}

// BenchmarkRemoveConnManyGroups closes, one by one, 400 connections that
// each hold a consumer channel in the same 1,000 groups (the work of a
// closing flood of heartbeats that joined every group). ns/op is per
// close.
func BenchmarkRemoveConnManyGroups(b *testing.B) {
	const conns, groups = 400, 1000
	regs := make([]ConsumerRegistration, groups)
	for i := range regs {
		regs[i] = hbReg("G" + strconv.Itoa(i))
	}
	fill := func() *ClientTable {
		ct := NewClientTable(zerolog.Nop())
		for c := range conns {
			_, err := ct.RegisterHeartbeat(Heartbeat{Channel: ClientChannel{ClientID: "c" + strconv.Itoa(c), ConnID: uint64(c + 1)},
				Consumers: regs}, groups)
			if err != nil {
				b.Fatal(err)
			}
		}
		return ct
	}
	ct, next := fill(), 1
	b.ResetTimer()
	for range b.N {
		if next > conns {
			b.StopTimer()
			ct, next = fill(), 1
			b.StartTimer()
		}
		if len(ct.RemoveConn(uint64(next))) != groups {
			b.Fatal("a close left groups unchanged")
		}
		next++
	}
}
