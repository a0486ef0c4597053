// Package locks owns the rebalance lock table: which client of a consumer
// group holds each message queue for orderly consumption over PULL, as
// RocketMQ's broker/.../client/rebalance/RebalanceLockManager.java keeps
// it for LOCK_BATCH_MQ (41) and UNLOCK_BATCH_MQ (42).
//
// A Java push consumer with a MessageListenerOrderly (PULL mode, not POP)
// locks every queue the rebalance gives it before it pulls from it, renews
// the locks every 20 s (rocketmq.client.rebalance.lockInterval) and
// unlocks a queue it gives up, or all of them at shutdown. The table is
// memory only, as Java's: after a broker restart every lock is free and
// the clients lock again on their next renewal.
//
// Rules (Table): a lock is held by one clientId; it is live while the last
// lock or renewal by its holder is at most MaxLive ago (Java's
// rocketmq.broker.rebalance.lockMaxLiveTime, 60 s; popshim's
// --rebalance-lock-max-live-time); the holder locking again renews it; any
// client may take a queue whose lock expired; only the holder's unlock
// removes it. A client's connection closing does not release its locks:
// they expire, as in Java (the client may be reconnecting and still
// consuming under its own client-side lock).
//
// This is not the POP path's per-queue try-lock (broker/queue_locks.go),
// which serialises two POPs on one queue for the length of one read.
//
// It must not touch storage, the network, or another subsystem. Every
// method takes one mutex for a map operation, so it may run on an event
// loop.
package locks
