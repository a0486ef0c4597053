package batch

import (
	"sync/atomic"
	"time"
)

// completerDepth is how many written batches may wait for their Done
// callbacks while the writer already builds and writes the next one.
const completerDepth = 4

// inlineCompleteOps: a written batch of at most this many ops is completed
// on the writer goroutine itself when the completer has nothing pending.
// At light load a batch holds a few ops whose Done callbacks cost a few µs
// each, less than waking the parked completer goroutine (a futex wake and,
// on a busy 2-vCPU machine, a wait for a P: 0.2–0.4 ms at p50 measured as
// popshim_writer_stage_seconds{stage="complete_wait"}); under load batches
// are larger and their completion still overlaps the next write.
const inlineCompleteOps = 32

// groupLoop is the single group-commit writer: block for the first op, take
// everything queued (up to the caps), apply each op to one Txn, one synced
// write, then hand the batch to the completer. One write in flight; no
// timer. The completer runs the Done callbacks (reply encoding) of batch N
// while the writer writes batch N+1, so that work is off the write path;
// batches are completed in write order and ops in accept order. A small
// batch is completed inline when the completer is idle (inlineCompleteOps):
// every batch handed over before it has then been completed, so the order
// holds.
func (w *Writer) groupLoop() {
	defer w.wg.Done()
	batches := make(chan written, completerDepth)
	free := make(chan []*Op, completerDepth+2) // recycled batch slices
	var pending atomic.Int64                   // batches handed to the completer, not yet completed
	w.wg.Add(1)
	go w.completer(batches, free, &pending)
	defer close(batches)
	var headWait [numLanes]time.Duration
	for {
		var buf []*Op
		select {
		case buf = <-free:
		default:
			buf = make([]*Op, 0, 64)
		}
		ops, done := w.lanes.takeBatch(buf, w.opts.MaxBatchOps, w.opts.MaxBatchBytes, w.bgMax, w.opts.MaxBulkOps, &headWait)
		taken := monoNanos()
		if done {
			return
		}
		if len(ops) == 0 {
			select {
			case free <- ops:
			default:
			}
			<-w.lanes.signal
			continue
		}
		w.m.observeHeadWait(&headWait)
		ops = w.writeBatch(ops)
		b := written{ops: ops, taken: taken, at: monoNanos()}
		if len(ops) <= inlineCompleteOps && pending.Load() == 0 {
			w.completeBatch(b)
			select {
			case free <- ops[:0]:
			default:
			}
			continue
		}
		pending.Add(1)
		batches <- b
	}
}

// written is a batch handed to the completer: its ops, when it was taken
// from the lanes and when its write ended (monoNanos).
type written struct {
	ops       []*Op
	taken, at int64
}

// completer calls Done for every op of every written batch, in order, then
// recycles the batch slice and counts the batch off pending. It exits when
// groupLoop closes batches.
func (w *Writer) completer(batches <-chan written, free chan<- []*Op, pending *atomic.Int64) {
	defer w.wg.Done()
	for b := range batches {
		w.completeBatch(b)
		pending.Add(-1)
		select {
		case free <- b.ops[:0]:
		default:
		}
	}
}

// completeBatch calls Done for every op of b, in order, observing the
// per-op stages of the sampled ones, and clears b.ops. Writer or completer
// goroutine, one batch at a time.
func (w *Writer) completeBatch(b written) {
	if box := w.scope.Load(); box != nil {
		box.s.Begin()
		defer box.s.End()
	}
	st := w.m.stages
	for _, op := range b.ops {
		if op.seq&stageSampleMask != 0 {
			w.complete(op, op.err)
			continue
		}
		lane, queued := op.Lane, op.queued // the op is its owner's again once Done returns
		start := monoNanos()
		w.complete(op, op.err)
		st.observeOp(lane, queued, b.taken, b.at, start, monoNanos())
	}
	clear(b.ops)
}

// writeBatch applies and commits one batch and sets each op's result in
// op.err: its Apply error, else the write error; ops shed by takeBatch
// keep their *QueueTimeoutError and are not applied. After a failed write
// the ops still queued are appended, failed with the writer's failure.
// Returns the ops to complete, in order.
func (w *Writer) writeBatch(ops []*Op) []*Op {
	w.storeMu.RLock()
	defer w.storeMu.RUnlock()
	if err := w.lanes.failure(); err != nil {
		for _, op := range ops {
			if op.err == nil {
				op.err = err
			}
		}
		return ops
	}
	tx := w.store.Begin()
	applyStart := time.Now()
	bytes := 0
	for _, op := range ops {
		if op.err != nil { // shed by takeBatch (counted there in Stats)
			w.m.rejects[op.Lane].Inc()
			continue
		}
		bytes += op.Bytes
		op.err = op.apply(tx)
	}
	wrote := tx.Count() > 0
	start := time.Now()
	w.m.stages.batch[StageApply].Observe(start.Sub(applyStart).Seconds())
	err := tx.Commit()
	w.m.observeBatch(len(ops), bytes, wrote, time.Since(start))
	if err == nil {
		return ops
	}
	for _, op := range ops {
		if op.err == nil {
			op.err = err
		}
	}
	queued, ferr := w.afterWriteError(err)
	for _, op := range queued {
		op.err = ferr
	}
	return append(ops, queued...)
}
