package locks

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// clock is a manual broker clock in Unix ms.
type clock struct{ ms atomic.Int64 }

func (c *clock) now() int64              { return c.ms.Load() }
func (c *clock) advance(d time.Duration) { c.ms.Add(d.Milliseconds()) }

func mq(topic string, id int32) codec.MessageQueue {
	return codec.MessageQueue{Topic: topic, BrokerName: "b", QueueID: id}
}

func newTable(maxLive time.Duration) (*Table, *clock) {
	c := &clock{}
	c.ms.Store(1_000_000)
	return New(maxLive, c.now), c
}

// TestLockHolderRenewExpiry: a free queue is locked; another client is
// refused while the lock lives; the holder's relock renews it; exactly
// maxLive after the last renewal it still holds (Java: strictly more),
// one millisecond later anyone may take it.
func TestLockHolderRenewExpiry(t *testing.T) {
	tb, c := newTable(60 * time.Second)
	q0, q1 := mq("T", 0), mq("T", 1)
	assert.Equal(t, []codec.MessageQueue{q0, q1}, tb.TryLockBatch("G", "A", []codec.MessageQueue{q0, q1, q0}))
	assert.Empty(t, tb.TryLockBatch("G", "B", []codec.MessageQueue{q0, q1}))
	assert.Equal(t, []codec.MessageQueue{q1}, tb.TryLockBatch("G2", "B", []codec.MessageQueue{q1}), "groups are separate")
	assert.Equal(t, []codec.MessageQueue{{Topic: "T", BrokerName: "other", QueueID: 0}},
		tb.TryLockBatch("G", "B", []codec.MessageQueue{{Topic: "T", BrokerName: "other", QueueID: 0}}), "brokerName is part of the key")

	c.advance(50 * time.Second)
	assert.Equal(t, []codec.MessageQueue{q0}, tb.TryLockBatch("G", "A", []codec.MessageQueue{q0}), "renewal")
	c.advance(20 * time.Second) // q1: 70 s since its lock, q0: 20 s since its renewal
	assert.Equal(t, []codec.MessageQueue{q1}, tb.TryLockBatch("G", "B", []codec.MessageQueue{q0, q1}))
	h, ok := tb.Holder("G", q1)
	require.True(t, ok)
	assert.Equal(t, "B", h)

	c.advance(40 * time.Second) // q0: exactly 60 s since its renewal
	h, ok = tb.Holder("G", q0)
	assert.True(t, ok && h == "A", "exactly maxLive is still live")
	assert.False(t, tb.AllExpired("G"))
	c.advance(time.Millisecond)
	_, ok = tb.Holder("G", q0)
	assert.False(t, ok)
	assert.Equal(t, []codec.MessageQueue{q0}, tb.TryLockBatch("G", "B", []codec.MessageQueue{q0}))
}

// TestUnlockOnlyByHolder: an unlock by another client changes nothing; the
// holder's unlock frees the queue at once, expired or not; AllExpired
// follows the live locks of the group.
func TestUnlockOnlyByHolder(t *testing.T) {
	tb, c := newTable(10 * time.Second)
	q0, q1 := mq("T", 0), mq("T", 1)
	assert.True(t, tb.AllExpired("G"))
	tb.TryLockBatch("G", "A", []codec.MessageQueue{q0, q1})
	assert.Equal(t, 0, tb.UnlockBatch("G", "B", []codec.MessageQueue{q0, q1}))
	assert.Equal(t, 0, tb.UnlockBatch("nobody", "A", []codec.MessageQueue{q0}))
	assert.Empty(t, tb.TryLockBatch("G", "B", []codec.MessageQueue{q0}))
	assert.Equal(t, 1, tb.UnlockBatch("G", "A", []codec.MessageQueue{q0}))
	assert.Equal(t, []codec.MessageQueue{q0}, tb.TryLockBatch("G", "B", []codec.MessageQueue{q0}))

	c.advance(11 * time.Second)
	assert.True(t, tb.AllExpired("G"))
	assert.Equal(t, 1, tb.UnlockBatch("G", "A", []codec.MessageQueue{q1}), "the holder may unlock an expired lock")
	tb.TryLockBatch("G", "C", []codec.MessageQueue{q1}) // prunes B's expired q0
	assert.False(t, tb.AllExpired("G"))
	assert.Equal(t, 1, tb.UnlockBatch("G", "C", []codec.MessageQueue{q1}))
	tb.mu.Lock()
	assert.Empty(t, tb.groups, "an emptied group leaves the table")
	tb.mu.Unlock()
}

// TestDefaultMaxLive: a non-positive lifetime means Java's 60 s.
func TestDefaultMaxLive(t *testing.T) {
	tb, _ := newTable(0)
	assert.Equal(t, DefaultMaxLive, tb.MaxLive())
}
