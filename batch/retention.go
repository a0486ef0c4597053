package batch

import (
	"time"

	"github.com/popshim/popshim/popstore"
)

// retention runs the store's age-based retention every interval: plan on
// its own goroutine (reads only), then one background-lane op with the range
// deletes, then a compaction of the deleted ranges.
type retention struct {
	w    *Writer
	quit chan struct{}
	done chan struct{}
}

func startRetention(w *Writer, every time.Duration) *retention {
	r := &retention{w: w, quit: make(chan struct{}), done: make(chan struct{})}
	go r.loop(every)
	return r
}

func (r *retention) loop(every time.Duration) {
	defer close(r.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-r.quit:
			return
		case <-t.C:
			if err := r.w.RunRetention(); err != nil {
				r.w.log.Warn().Err(err).Msg("retention pass failed")
			}
		}
	}
}

func (r *retention) stop() {
	close(r.quit)
	<-r.done
}

// RunRetention performs one retention pass now and waits for its batch
// (the periodic loop calls it too; passes never overlap). Blocks: never on
// the event loop or the writer goroutine. Errors: store read errors, Submit
// errors, the write error.
func (w *Writer) RunRetention() error {
	w.retMu.Lock()
	defer w.retMu.Unlock()
	lastFloor := &w.retFloor
	plan, err := w.store.PlanRetention(w.store.NowMillis())
	if err != nil {
		return err
	}
	if plan.PhysicalFloor <= *lastFloor {
		plan.PhysicalFloor = 0 // nothing new to drop from the index
	}
	if len(plan.Trims) == 0 && plan.PhysicalFloor == 0 {
		return nil
	}
	if err := w.SubmitWait(LaneBackground, func(tx *popstore.Txn) error { return tx.ApplyRetention(plan) }); err != nil {
		return err
	}
	if plan.PhysicalFloor > 0 {
		*lastFloor = plan.PhysicalFloor
	}
	w.log.Info().Int("queues", len(plan.Trims)).Int64("cutoffMillis", plan.CutoffMillis).Msg("retention trimmed")
	w.store.CompactTrimmed(plan)
	return nil
}
