package broker_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/codec"
)

func lockQueues(ids ...int32) []codec.MessageQueue {
	out := make([]codec.MessageQueue, len(ids))
	for i, id := range ids {
		out[i] = codec.MessageQueue{Topic: "TL", BrokerName: brokertest.BrokerName, QueueID: id}
	}
	return out
}

func lockBatch(t *testing.T, f *brokertest.Fixture, group, client string, ids ...int32) ([]codec.MessageQueue, error) {
	t.Helper()
	return brokertest.Await(t, func(done func([]codec.MessageQueue, error)) {
		f.Broker.LockBatch(broker.LockBatchRequest{ConsumerGroup: group, ClientID: client, Queues: lockQueues(ids...)}, done)
	})
}

func unlockBatch(t *testing.T, f *brokertest.Fixture, group, client string, ids ...int32) error {
	t.Helper()
	return brokertest.Await0(t, func(done func(error)) {
		f.Broker.UnlockBatch(broker.LockBatchRequest{ConsumerGroup: group, ClientID: client, Queues: lockQueues(ids...)}, done)
	})
}

// TestLockBatchExclusiveRenewExpire: one client of a group holds a queue
// at a time; its relock renews the lock; after --rebalance-lock-max-live-
// time without renewal (broker clock) another client takes it; the
// holder's unlock frees it at once; an unlock by another client changes
// nothing.
func TestLockBatchExclusiveRenewExpire(t *testing.T) {
	cfg := brokertest.Config(t.TempDir())
	cfg.RebalanceLockMaxLiveTime = 10 * time.Second
	f := brokertest.Start(t, cfg, nil)

	got, err := lockBatch(t, f, "GL", "A", 0, 1, 2)
	require.NoError(t, err)
	assert.Equal(t, lockQueues(0, 1, 2), got)
	got, err = lockBatch(t, f, "GL", "B", 1, 2, 3)
	require.NoError(t, err)
	assert.Equal(t, lockQueues(3), got, "A holds 1 and 2")
	assert.False(t, f.Broker.Locks.AllExpired("GL"))

	f.Broker.AdvanceClock(8_000)
	got, _ = lockBatch(t, f, "GL", "A", 1) // renews 1 only
	assert.Equal(t, lockQueues(1), got)
	f.Broker.AdvanceClock(3_000) // 0 and 2: 11 s since A locked them; 1: 3 s
	got, _ = lockBatch(t, f, "GL", "B", 0, 1, 2)
	assert.Equal(t, lockQueues(0, 2), got)

	require.NoError(t, unlockBatch(t, f, "GL", "B", 1))
	got, _ = lockBatch(t, f, "GL", "C", 1)
	assert.Empty(t, got, "B's unlock of A's queue changed nothing")
	require.NoError(t, unlockBatch(t, f, "GL", "A", 1))
	got, _ = lockBatch(t, f, "GL", "C", 1)
	assert.Equal(t, lockQueues(1), got, "A's unlock freed it at once")
	assert.NotNil(t, got)
	got, _ = lockBatch(t, f, "GL", "A", 1)
	assert.Equal(t, []codec.MessageQueue{}, got, "nothing locked is an empty set, not null")
}

// TestLockBatchRefusals: an empty group or clientId is SYSTEM_ERROR, and
// nothing is locked.
func TestLockBatchRefusals(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	_, err := lockBatch(t, f, "", "A", 0)
	assert.Equal(t, codec.SystemError, broker.ErrorOf(err).Code)
	assert.Contains(t, err.Error(), "<consumerGroup>")
	_, err = lockBatch(t, f, "GL", "", 0)
	assert.Equal(t, codec.SystemError, broker.ErrorOf(err).Code)
	assert.Contains(t, err.Error(), "<clientId>")
	err = unlockBatch(t, f, "GL", "", 0)
	assert.Equal(t, codec.SystemError, broker.ErrorOf(err).Code)
	assert.True(t, f.Broker.Locks.AllExpired("GL"))
}

// TestLockBatchMemoryOnly: locks do not survive a restart, as in Java (the
// clients lock again on their next renewal), and a closed connection does
// not release them.
func TestLockBatchMemoryOnly(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	got, _ := lockBatch(t, f, "GL", "A", 0)
	require.Len(t, got, 1)
	f.Broker.ConnClosed(1)
	got, _ = lockBatch(t, f, "GL", "B", 0)
	assert.Empty(t, got)
	f.Restart()
	got, _ = lockBatch(t, f, "GL", "B", 0)
	assert.Equal(t, lockQueues(0), got)
}
