package batch

import "time"

// groupLoop is the single group-commit writer: block for the first op, take
// everything queued (up to the caps), apply each op to one Txn, one synced
// write, complete in accept order. One write in flight; no timer.
func (w *Writer) groupLoop() {
	defer w.wg.Done()
	buf := make([]*Op, 0, 64)
	var headWait [numLanes]time.Duration
	for {
		ops, done := w.lanes.takeBatch(buf, w.opts.MaxBatchOps, w.opts.MaxBatchBytes, w.bgMax, w.opts.MaxBulkOps, &headWait)
		if done {
			return
		}
		if len(ops) == 0 {
			<-w.lanes.signal
			continue
		}
		w.m.observeHeadWait(&headWait)
		w.writeBatch(ops)
		clear(ops)
		buf = ops[:0]
	}
}

// writeBatch applies, commits and completes one batch.
func (w *Writer) writeBatch(ops []*Op) {
	if err := w.lanes.failure(); err != nil {
		for _, op := range ops {
			w.complete(op, err)
		}
		return
	}
	tx := w.store.Begin()
	bytes := 0
	for _, op := range ops {
		bytes += op.Bytes
		op.err = op.apply(tx)
	}
	wrote := tx.Count() > 0
	start := time.Now()
	err := tx.Commit()
	w.m.observeBatch(len(ops), bytes, wrote, time.Since(start))
	for _, op := range ops {
		e := op.err
		if e == nil {
			e = err
		}
		w.complete(op, e)
	}
	if err != nil {
		w.afterWriteError(err)
	}
}
