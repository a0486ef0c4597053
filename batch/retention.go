package batch

import (
	"time"

	"github.com/popshim/popshim/popstore"
)

// retention runs the store's age-based retention every interval: plan on
// its own goroutine (reads only), then one background-lane op with the range
// deletes, then a compaction of the deleted ranges. It also releases the
// commit log's mapped pages every Options.MappedReleaseInterval, with
// retention passes or without them (interval 0).
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

// loop runs a retention pass every interval (none when every is 0) and
// above DiskCleanForciblyRatio, and releases mapped pages, until stop.
func (r *retention) loop(every time.Duration) {
	defer close(r.done)
	var tick <-chan time.Time
	if every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
	}
	// Above DiskCleanForciblyRatio passes run every forcedCheckEvery, as
	// a Java broker's CleanCommitLogService looks every
	// cleanResourceInterval (10 s), not only every retention interval.
	var forced <-chan time.Time
	if every > 0 && r.w.opts.DiskCleanForciblyRatio > 0 {
		ft := time.NewTicker(forcedCheckEvery)
		defer ft.Stop()
		forced = ft.C
	}
	var release <-chan time.Time
	if releaseEvery := r.w.opts.MappedReleaseInterval; releaseEvery > 0 {
		rt := time.NewTicker(releaseEvery)
		defer rt.Stop()
		release = rt.C
	}
	for {
		select {
		case <-r.quit:
			return
		case <-release:
			r.w.store.ReleaseMappedPages()
			continue
		case <-tick:
		case <-forced:
			if ratio, _, err := r.w.store.DiskUsage(); err != nil || ratio <= r.w.opts.DiskCleanForciblyRatio {
				continue
			}
		}
		if err := r.w.RunRetention(); err != nil {
			r.w.log.Warn().Err(err).Msg("retention pass failed")
		}
	}
}

// forcedCheckEvery is how often the retention loop looks for a disk used
// above DiskCleanForciblyRatio.
const forcedCheckEvery = 10 * time.Second

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
	// Planning reads records of the commit log's oldest part through its
	// mapping; each pass ends by unmapping the pages read (they stay in
	// the page cache), so the process's RSS does not keep them.
	defer w.store.ReleaseMappedPages()
	lastFloor := &w.retFloor
	now := w.store.NowMillis()
	plan, err := w.store.PlanRetention(now)
	if err != nil {
		return err
	}
	if cutoff, ok := w.forcedCutoff(now); ok && cutoff > plan.CutoffMillis {
		if plan, err = w.store.PlanRetentionBefore(cutoff); err != nil {
			return err
		}
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

// forcedMinSpanMillis is the least stored time a forced pass deletes, and
// the youngest stored time it leaves alone.
const forcedMinSpanMillis = 60_000

// forcedCutoff returns the cutoff of a forced clean-up when the store's
// filesystem is used above DiskCleanForciblyRatio: the oldest stored
// message's time plus a tenth of the span up to now (at least
// forcedMinSpanMillis), at most now − forcedMinSpanMillis. ok=false when
// the disk is below the ratio, the check is off, or nothing would go.
// Retention goroutine.
func (w *Writer) forcedCutoff(now int64) (int64, bool) {
	limit := w.opts.DiskCleanForciblyRatio
	if limit <= 0 {
		return 0, false
	}
	ratio, _, err := w.store.DiskUsage()
	if err != nil || ratio <= limit {
		return 0, false
	}
	oldest, ok, err := w.store.OldestStoreTime()
	if err != nil || !ok {
		return 0, false
	}
	cutoff := min(oldest+max((now-oldest)/10, forcedMinSpanMillis), now-forcedMinSpanMillis)
	if cutoff <= oldest {
		return 0, false
	}
	w.log.Warn().Float64("usedRatio", ratio).Float64("cleanForciblyRatio", limit).Int64("oldestStoreMillis", oldest).
		Int64("cutoffMillis", cutoff).Msg("disk usage above the clean-forcibly ratio; deleting the oldest messages before their retention ends")
	return cutoff, true
}
