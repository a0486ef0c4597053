package handler_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
)

// lockBody is a LockBatchRequestBody as the Java client's fastjson writes
// it (fields in alphabetical order).
func lockBody(group, clientID, topic string, queues ...int32) []byte {
	mqs := ""
	for i, q := range queues {
		if i > 0 {
			mqs += ","
		}
		mqs += fmt.Sprintf(`{"brokerName":%q,"queueId":%d,"topic":%q}`, testBrokerName, q, topic)
	}
	return fmt.Appendf(nil, `{"clientId":%q,"consumerGroup":%q,"mqSet":[%s],"onlyThisBroker":false}`, clientID, group, mqs)
}

// lockedQueues sends LOCK_BATCH_MQ and returns the queue ids of lockOKMQSet.
func lockedQueues(t *testing.T, c *client.Conn, group, clientID, topic string, queues ...int32) []int32 {
	t.Helper()
	resp := d2Call(t, c, codec.RequestLockBatchMQ, nil, lockBody(group, clientID, topic, queues...))
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	var body struct {
		LockOKMQSet []codec.MessageQueue `json:"lockOKMQSet"`
	}
	require.NoError(t, json.Unmarshal(resp.Body, &body), string(resp.Body))
	require.NotNil(t, body.LockOKMQSet, "lockOKMQSet is a set, never null: %s", resp.Body)
	ids := []int32{}
	for _, mq := range body.LockOKMQSet {
		require.Equal(t, topic, mq.Topic)
		require.Equal(t, testBrokerName, mq.BrokerName)
		ids = append(ids, mq.QueueID)
	}
	return ids
}

// TestLockBatchMQ: LOCK_BATCH_MQ (41) gives each queue to one client of a
// group; the holder relocks (renews); a oneway UNLOCK_BATCH_MQ (42) frees
// the holder's queues and no other's; a lock not renewed for
// --rebalance-lock-max-live-time (the broker clock moved) goes to the next
// client that asks; the holder's connection closing frees nothing.
func TestLockBatchMQ(t *testing.T) {
	h := startHarness(t, func(c *conf.Config) { c.RebalanceLockMaxLiveTime = 20 * time.Second })
	a, b := h.dial(), h.dial()
	assert.Equal(t, []int32{0, 1, 2}, lockedQueues(t, a, "GLK", "A", "TLK", 0, 1, 2))
	assert.Equal(t, []int32{3}, lockedQueues(t, b, "GLK", "B", "TLK", 0, 1, 2, 3))
	assert.Equal(t, []int32{0, 1}, lockedQueues(t, b, "GLK2", "B", "TLK", 0, 1), "another group")

	// Oneway unlock of 0 by A, then of 1 by B (not its own): in order on
	// each connection, so the lock calls after them see their effect.
	un := codec.NewRequest(codec.RequestUnlockBatchMQ, 0, nil, lockBody("GLK", "A", "TLK", 0))
	require.NoError(t, a.InvokeOneway(un))
	un = codec.NewRequest(codec.RequestUnlockBatchMQ, 0, nil, lockBody("GLK", "B", "TLK", 1))
	require.NoError(t, b.InvokeOneway(un))
	assert.Equal(t, []int32{1}, lockedQueues(t, a, "GLK", "A", "TLK", 1), "A still holds 1 (renewed)")
	assert.Equal(t, []int32{0}, lockedQueues(t, b, "GLK", "B", "TLK", 0, 1))

	// A two-way unlock is answered SUCCESS without a body.
	resp := d2Call(t, b, codec.RequestUnlockBatchMQ, nil, lockBody("GLK", "B", "TLK", 3))
	assert.Equal(t, codec.Success, resp.Code)
	assert.Empty(t, resp.Body)

	require.NoError(t, a.Close()) // A's locks stay until they expire
	assert.Empty(t, lockedQueues(t, b, "GLK", "B", "TLK", 1, 2))
	h.advance(10 * time.Second) // half the lifetime: still A's
	assert.Empty(t, lockedQueues(t, b, "GLK", "B", "TLK", 1, 2))
	h.advance(11 * time.Second)
	assert.Equal(t, []int32{1, 2}, lockedQueues(t, b, "GLK", "B", "TLK", 1, 2))

	// Bad bodies: SYSTEM_ERROR naming what is wrong; nothing locked.
	resp = d2Call(t, b, codec.RequestLockBatchMQ, nil, []byte("{not json"))
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.Contains(t, resp.Remark, "lock batch mq:")
	resp = d2Call(t, b, codec.RequestUnlockBatchMQ, nil, nil)
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.Contains(t, resp.Remark, "unlock batch mq:")
	resp = d2Call(t, b, codec.RequestLockBatchMQ, nil, lockBody("GLK", "", "TLK", 5))
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.Contains(t, resp.Remark, "<clientId>")
	assert.Equal(t, []int32{5}, lockedQueues(t, b, "GLK", "C", "TLK", 5))
}
