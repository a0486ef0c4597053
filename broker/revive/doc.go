// Package revive owns the revive loop: the background goroutine that scans
// POP checkpoints whose invisible time has passed, writes a copy of each
// message to its pop retry topic (%RETRY%group+topic, reconsumeTimes + 1,
// original properties kept) or, past the retry limit, to %DLQ%<group>, and
// deletes the checkpoint in the same synced WriteBatch (background lane of
// the batch writer). A failed attempt reschedules the checkpoint with
// RocketMQ's backoff; CONSUMER_SEND_MSG_BACK checkpoints (ReviveQid
// SendBackReviveQid) are delivered to %RETRY%<group>.
//
// Callers: the broker builds one Reviver (New), starts it and stops it
// before the writer closes; every write that puts a checkpoint calls
// NoteDurable from its batch.Op completion (the writer's completer
// goroutine); tests call Trigger. The scan and message reads run on the
// revive goroutine only, never on an event loop or the writer; each chunk's
// apply runs on the writer goroutine.
//
// It must not answer the network or import handler/ or another subsystem's
// package: the store, writer, topic table, clock and metrics are passed in
// (Deps).
package revive
