// Package transaction owns the broker side of RocketMQ transactional
// messages below the request handlers: the conversions of a half message
// (records.go: the stored half, the committed message, the copy moved to
// TRANS_CHECK_MAX_TIME_TOPIC, the body of a check), the check-back Loop
// (loop.go) that asks producers about halves left undecided, the Checker
// interface through which it reaches them (checker.go), and the
// transaction metrics (metrics.go).
//
// Storage: a half is a popstore half message (popstore/halves.go), keyed
// by the physical offset it was given (its offsetMsgId, hence the
// END_TRANSACTION commitLogOffset) and carrying its tranStateTableOffset
// (a per-broker sequence), producer group, check count and next due
// time. The decision on a half, the append of the committed message and
// the removal of the half are one WriteBatch, so there is no op topic
// (RMQ_SYS_TRANS_OP_HALF_TOPIC) and a second decision finds nothing.
//
// The Loop: every Settings.Interval (and when a half made durable is due
// before its next planned pass) it scans the halves due at the broker
// clock's now, a chunk at a time. A half checked Settings.CheckMax times
// already, or stored longer ago than the store's retention (Java's
// fileReservedTime rule, needSkip), is moved to TRANS_CHECK_MAX_TIME_TOPIC:
// a copy is appended there and the half itself is kept, discarded (never
// checked again, not counted as pending), until the store's retention
// would have deleted it, so that a producer whose local transaction ends
// late still commits or rolls back, as Java's commit log allows; a later
// pass deletes it when that time comes. Every other due half gets its check count incremented and its next due
// time set one interval ahead. Those writes are one background-lane op per
// chunk; only after it is durable does the loop hand each checked half to
// the Checker, on the loop's own goroutine: never on an event loop, never
// inside the writer.
//
// Callers: package broker builds one Loop (New), installs the protocol
// adapters' Checkers (AddChecker: one per protocol, tried in turn), starts it and stops it before the writer
// closes; its END_TRANSACTION and half-message entry points use the
// conversions. This package must not answer the network or import
// handler/, remoting/ or another subsystem's package: the store, writer,
// clock, topic creation and metrics are passed in (Deps).
package transaction
