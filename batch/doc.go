// Package batch is popshim's group-commit writer: a bounded three-lane queue
// of mutations (Op) in front of one goroutine that persists everything queued
// in one synced RocksDB WriteBatch and then completes each op, in accept
// order. No request ever waits in a worker thread for an fsync: Submit never
// blocks (a full lane returns ErrBusy → SYSTEM_BUSY), and the reply is
// written from the op's Done callback once its batch is durable.
//
//	Submit(op) ──▶ lane queue (fg | produce | bg) ──▶ writer goroutine:
//	                 full? ErrBusy                      take all queued (caps: MaxBatchOps,
//	                                                    MaxBatchBytes, bg ≤ BackgroundShare)
//	                                                    Txn.Do(op.Apply) for each, in accept order
//	                                                    Txn.Commit: one db.Write(sync=true)
//	                                                    op.Done(err) for each, in accept order
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
