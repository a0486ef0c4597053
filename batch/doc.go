// Package batch is popshim's group-commit writer: a bounded multi-lane queue
// of mutations (Op) in front of one goroutine that persists everything queued
// in one synced RocksDB WriteBatch and then completes each op, in accept
// order. No request ever waits in a worker thread for an fsync: Submit never
// blocks (a full lane returns ErrBusy → SYSTEM_BUSY), and the reply is
// written from the op's Done callback once its batch is durable.
//
//	Submit(op) ──▶ lane queue               ──▶ writer goroutine:
//	               (fg | bulk | produce | bg)     take all queued (caps: MaxBatchOps,
//	                 full? ErrBusy                MaxBatchBytes, bg ≤ BackgroundShare,
//	                                              bulk ≤ MaxBulkOps)
//	                                              Txn.Do(op.Apply) for each, in accept order
//	                                              Txn.Commit: one db.Write(sync=true)
//	                                              hand the batch to the completer ──▶ completer goroutine:
//	                                                                                   op.Done(err) for each,
//	                                                                                   in accept order
//
// The completer runs the Done callbacks (reply encoding and queueing) of one
// batch while the writer already writes the next, so that work is not on
// the write path. A batch of at most 32 ops written while the completer is
// idle is completed by the writer itself (light load: cheaper than waking
// the completer). Batches complete in write order; Done still runs only
// after its batch is durable. Each batch's completion is bracketed by the
// CompletionScope the stack sets (SetCompletionScope): the remoting
// server's, which sends each connection's replies of the batch together.
//
// Every stage is timed (popshim_writer_stage_seconds, stages.go): lane
// wait, apply, write, completion wait, Done and total, per op for one op in
// four and per batch for apply and write.
//
// Fast/slow isolation (the AutoMQ idea): latency-sensitive foreground ops
// (ACK) are never queued behind a burst. A burst on the bulk lane (CHANGE)
// or the background lane (revive) enters each batch only up to its cap, so
// an ACK waits for at most one batch holding at most MaxBulkOps bulk ops.
// The price is order across lanes: a bulk op may be applied after a
// foreground op accepted later. Within a lane, and within a batch, accept
// order holds.
//
// There is no linger timer: while one write is in flight new ops accumulate,
// so the batch size adapts to the fsync latency (hashicorp/raft's group
// commit loop, badger's one-write-in-flight).
//
// Failures: an Apply error fails only its op (its writes are rolled back from
// the batch). A failed synced write fails every op of that batch. If the
// error does not wrap popstore.ErrWriteRejected the WAL state is unknown, so
// the writer is stopped for good: queued ops and later Submits get ErrFailed
// (house style 9; an fsync is never retried).
//
// ModeSync is the measurement baseline (--pop-write-mode=sync): SyncWorkers
// goroutines each write one op with its own synced db.Write, as RocketMQ's
// ACK executor does.
//
// Close stops accepting, drains and completes everything accepted, and
// returns; the caller then closes the store.
package batch
