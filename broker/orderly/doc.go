// Package orderly owns the rules of orderly (FIFO) POP on one queue lease
// (popstore.OrderState), as Apache RocketMQ 5.5 serves them
// (broker/.../offset/ConsumerOrderInfoManager.java, PopMessageProcessor's
// order path, AckMessageProcessor.ackOrderlyNew,
// ChangeInvisibleTimeProcessor.processChangeInvisibleTimeForOrderNew;
// docs/SCENARIOS.md ORD-*, BAT-02, CHG-05, POLL-03, POLL-04):
//
//   - Blocked: a queue whose lease holds an un-acked offset whose visibility
//     deadline has not passed is blocked for every POP but one carrying the
//     lease's attemptId (re-entrant retry).
//   - NewLease: a POP that passes the block records what it returned; an
//     offset returned again counts one more attempt unless the attemptId is
//     the same (a retry of a lost reply is not an attempt).
//   - Commit (ACK): a stale popTime changes nothing; an offset outside the
//     lease is illegal; else it is marked and the consume offset moves to
//     the first un-acked offset of the lease (past the contiguous acked
//     prefix).
//   - Change (CHANGE_MESSAGE_INVISIBLETIME): moves one offset's deadline;
//     a stale popTime changes nothing.
//   - CountInfo: the orderCountInfo response string.
//
// Every function is pure: it reads a lease value and returns a new one, so
// the callers run it inside the batch writer's Apply against the Txn's view
// (popstore.Txn.OrderState), where the read-modify-write is atomic with the
// write that makes it durable. It must not touch storage, the network or
// any other handler package.
package orderly
