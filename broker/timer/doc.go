// Package timer owns delayed delivery: delay levels (the DELAY property,
// RocketMQ's messageDelayLevel), timer messages (TIMER_DELIVER_MS,
// TIMER_DELAY_SEC, TIMER_DELAY_MS) and the delayed copies of
// CONSUMER_SEND_MSG_BACK.
//
// A delayed message is stored as a timer entry (popstore.Txn.PutTimer:
// keyed by due time, holding the record with its real topic and queue) in
// the same synced WriteBatch as the request that made it, so a success
// reply means the timer is durable; until it is due the message is in no
// queue, so POP, PULL, NOTIFICATION, GET_MAX_OFFSET and long polling do
// not see it. The delivery Loop scans entries due at the broker clock's now
// (popstore.Store.ScanTimers), a chunk at a time, and per chunk submits
// ONE background-lane op that appends each message to its real topic and
// queue (new queue offset, store timestamp of delivery) and deletes its
// entry: a crash leaves both or neither, so nothing is lost or delivered
// twice. The append wakes parked long polls through the store's append
// listener. Memory is bounded by one chunk whatever the backlog. While
// foreground, bulk or produce ops reach the writer, a drain past its
// first 4,096 timers is paced (pace.go): 16 KB chunks and a rest as long
// as each op took, so ACKs do not queue behind large delivery writes.
//
// Callers: the broker builds one Loop (New), starts it and stops it before
// the writer closes; SEND handlers resolve the properties of a message with
// Resolve (any goroutine, no I/O) and report each timer made durable with
// NoteDurable (from the op's completion), which wakes the loop when the
// new entry is due before its next planned pass. The scan and record
// conversion run on the loop's goroutine, never on an event loop or the
// writer; each chunk's apply runs on the writer goroutine.
//
// Deletion markers (TIMER_DEL_UNIQKEY, RECALL_MESSAGE) cancel a pending
// timer message of their key in their slot (cancel.go: SlotOf,
// DeleteKeyOf): the loop checks the markers of each chunk's slots before
// delivering it and purges markers whose slot is long over.
//
// It must not answer the network or import handler/ or another
// subsystem's package: the store, writer, topic look-up, clock and metrics
// are passed in (Deps).
package timer
