package broker

// Rebalance locks: LOCK_BATCH_MQ (41) and UNLOCK_BATCH_MQ (42) of remoting
// (broker/.../processor/AdminBrokerProcessor.java lockBatchMQ and
// unlockBatchMQ over client/rebalance/RebalanceLockManager.java). A Java
// push consumer with MessageListenerOrderly in PULL mode locks a queue
// before it pulls from it, renews its locks every 20 s and consumes a
// queue only while its client-side copy of the lock is fresh; the broker's
// table (broker/locks, Broker.Locks) makes sure one client of a group
// holds a queue at a time.
//
// Behaviour:
//   - LockBatch: every queue of the body that is free, whose lock expired
//     (--rebalance-lock-max-live-time after the holder's last lock, 60 s)
//     or that the client already holds (renewed) is locked for clientId;
//     the answer lists those (lockOKMQSet), the others are held live by
//     another client of the group.
//   - UnlockBatch: the client's own locks among the queues are released;
//     others' locks and free queues are left alone. Java clients send it
//     oneway.
//   - Memory only, as Java: nothing is written; a restart frees every lock
//     (the clients lock again on their next renewal). A closed connection
//     does not release its client's locks: they expire.
//   - onlyThisBroker and Java's lockInStrictMode (default false) do not
//     matter: popshim is one broker with no replicas, where Java's strict
//     mode has a quorum of one and answers what this broker locked.
//
// Response codes: SUCCESS (0); SYSTEM_ERROR (1) when consumerGroup or
// clientId is empty (a Java broker fails on them with an exception,
// answered as SYSTEM_ERROR too).

import "github.com/popshim/popshim/codec"

// LockBatchRequest is one LOCK_BATCH_MQ or UNLOCK_BATCH_MQ body
// (remoting/.../protocol/body/LockBatchRequestBody.java and
// UnlockBatchRequestBody.java: consumerGroup, clientId, mqSet,
// onlyThisBroker).
type LockBatchRequest struct {
	ConsumerGroup string
	ClientID      string
	// Queues is the mqSet: the queues named by topic, brokerName and
	// queueId (the brokerName is part of the lock's key and is echoed).
	Queues []codec.MessageQueue
	// OnlyThisBroker is carried for completeness; with one broker it
	// changes nothing.
	OnlyThisBroker bool
}

// check refuses a body without its group or client.
func (r *LockBatchRequest) check() *Error {
	switch {
	case r.ConsumerGroup == "":
		return &Error{Code: codec.SystemError, Remark: "the field <consumerGroup> of the lock batch body is empty"}
	case r.ClientID == "":
		return &Error{Code: codec.SystemError, Remark: "the field <clientId> of the lock batch body is empty"}
	}
	return nil
}

// LockBatch locks r.Queues for r.ClientID in r.ConsumerGroup and gives
// done the queues the client holds now (in request order, duplicates
// dropped; empty, not nil, when none), or an *Error (SYSTEM_ERROR) for an
// empty group or client. done runs on the caller's goroutine before
// LockBatch returns. Any goroutine; memory only.
func (b *Broker) LockBatch(r LockBatchRequest, done func([]codec.MessageQueue, error)) {
	if err := r.check(); err != nil {
		done(nil, err)
		return
	}
	locked := b.Locks.TryLockBatch(r.ConsumerGroup, r.ClientID, r.Queues)
	if len(locked) < len(r.Queues) {
		b.Log.Debug().Str("group", r.ConsumerGroup).Str("clientId", r.ClientID).Int("asked", len(r.Queues)).
			Int("locked", len(locked)).Msg("LOCK_BATCH_MQ: queues held by another client of the group")
	}
	done(locked, nil)
}

// UnlockBatch releases the locks r.ClientID holds on r.Queues in
// r.ConsumerGroup; done gets nil, or an *Error (SYSTEM_ERROR) for an empty
// group or client. done runs on the caller's goroutine before UnlockBatch
// returns. Any goroutine; memory only.
func (b *Broker) UnlockBatch(r LockBatchRequest, done func(error)) {
	if err := r.check(); err != nil {
		done(err)
		return
	}
	if n := b.Locks.UnlockBatch(r.ConsumerGroup, r.ClientID, r.Queues); n < len(r.Queues) {
		b.Log.Debug().Str("group", r.ConsumerGroup).Str("clientId", r.ClientID).Int("asked", len(r.Queues)).
			Int("released", n).Msg("UNLOCK_BATCH_MQ: some queues were not locked by this client")
	}
	done(nil)
}
