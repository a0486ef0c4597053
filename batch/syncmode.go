package batch

import "time"

// syncWorker is one of SyncWorkers baseline workers: take one op, write it
// with its own synced db.Write, complete it — the shape of RocketMQ's ACK
// executor with popConsumerKVServiceEnable. Concurrent workers' writes may
// still share an fsync through RocksDB's own write-group joining.
func (w *Writer) syncWorker() {
	defer w.wg.Done()
	for {
		op, done := w.lanes.takeOne()
		if done {
			return
		}
		if op == nil {
			<-w.lanes.signal
			continue
		}
		w.writeOne(op)
	}
}

func (w *Writer) writeOne(op *Op) {
	if op.Lane == LaneProduce && w.opts.MaxProduceWait > 0 {
		if waited := time.Duration(monoNanos() - op.queued); int64(waited) > op.shedAfter(w.opts.MaxProduceWait) {
			w.lanes.addReject(op.Lane)
			w.m.rejects[op.Lane].Inc()
			w.complete(op, &QueueTimeoutError{Waited: waited, Queued: w.lanes.depth(LaneProduce)})
			return
		}
	}
	w.storeMu.RLock()
	defer w.storeMu.RUnlock()
	if err := w.lanes.failure(); err != nil {
		w.complete(op, err)
		return
	}
	tx := w.store.Begin()
	var err error
	err = op.apply(tx)
	if err != nil {
		tx.Discard()
		w.complete(op, err)
		return
	}
	wrote := tx.Count() > 0
	start := time.Now()
	err = tx.Commit()
	w.m.observeBatch(1, op.Bytes, wrote, time.Since(start))
	w.complete(op, err)
	if err != nil {
		queued, ferr := w.afterWriteError(err)
		for _, q := range queued {
			w.complete(q, ferr)
		}
	}
}
