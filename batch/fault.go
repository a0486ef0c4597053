package batch

import (
	"errors"
	"fmt"
	"time"
)

// Errors of the fault paths (see also ErrFailed).
var (
	// ErrDiskFull: Submit of a LaneProduce op while the filesystem holding
	// the store is used above Options.DiskWarningRatio (RocketMQ's
	// diskSpaceWarningLevelRatio). Nothing queued; Done not called. Other
	// lanes (ACK, CHANGE, POP checkpoints, revive) are still accepted: they
	// are small and free space as they go. Handlers answer
	// SERVICE_NOT_AVAILABLE (14), as a Java broker whose store is not
	// writable.
	ErrDiskFull = errors.New("batch: disk usage above the warning level, store not writable for messages")
)

// QueueTimeoutError is the Done error of a LaneProduce op that waited in
// its queue longer than Options.MaxProduceWait and was shed without being
// written (RocketMQ's BrokerFastFailure with waitTimeMillsInSendQueue).
// errors.Is(err, ErrBusy) holds. Handlers answer SYSTEM_BUSY (2) with a
// "[TIMEOUT_CLEAN_QUEUE]" remark.
type QueueTimeoutError struct {
	Waited time.Duration // time spent in the queue
	Queued int           // produce ops still queued behind it
}

// Error says how long the produce op waited and how many were queued
// (for logs; the handler words the SYSTEM_BUSY remark itself).
func (e *QueueTimeoutError) Error() string {
	return fmt.Sprintf("batch: produce op shed after %d ms in the queue (%d queued)", e.Waited.Milliseconds(), e.Queued)
}

// Is makes errors.Is(err, ErrBusy) true.
func (e *QueueTimeoutError) Is(target error) bool { return target == ErrBusy }

// Writable reports whether the writer accepts every lane: no failed write
// awaits recovery and the disk is below the warning level. The name-server
// role advertises topics without write permission while it is false, so
// producers route elsewhere. Any goroutine; cheap (one mutex).
func (w *Writer) Writable() bool {
	failed, full := w.lanes.state()
	return failed == nil && !full
}

// QueuedBytes returns the sum of Op.Bytes queued in all lanes (bounded by
// Options.MaxQueuedBytes). Any goroutine.
func (w *Writer) QueuedBytes() int64 { return w.lanes.queuedBytes() }

// startProbe starts the recovery probe after a failed synced write, unless
// it runs already, recovery is disabled (ProbeInterval < 0) or Close has
// begun. Called on the writer goroutine.
func (w *Writer) startProbe() {
	w.faultMu.Lock()
	defer w.faultMu.Unlock()
	if w.faultStopped || w.opts.ProbeInterval < 0 || !w.probing.CompareAndSwap(false, true) {
		return
	}
	w.faultWG.Add(1)
	go w.probeLoop()
}

// probeLoop reopens the store every ProbeInterval until a reopen and its
// synced probe write succeed, then lets Submit accept work again. It holds
// storeMu exclusively during Reopen, so no op is applied or committed
// meanwhile. Exits on Close.
func (w *Writer) probeLoop() {
	defer w.faultWG.Done()
	defer w.probing.Store(false)
	t := time.NewTicker(w.opts.ProbeInterval)
	defer t.Stop()
	for attempt := 1; ; attempt++ {
		select {
		case <-w.stopFault:
			return
		case <-t.C:
		}
		w.storeMu.Lock()
		err := w.store.Reopen()
		if err == nil {
			w.lanes.recover()
			w.m.failedGauge.Set(0)
		}
		w.storeMu.Unlock()
		if err == nil {
			w.m.recoveries.Inc()
			w.log.Warn().Int("attempts", attempt).Msg("store reopened and a synced write succeeded; accepting work again")
			return
		}
		if attempt == 1 || attempt%30 == 0 {
			w.log.Error().Err(err).Int("attempts", attempt).Msg("store still not writable; refusing work")
		}
	}
}

// diskGuardLoop checks the store's filesystem every DiskCheckInterval:
// above DiskWarningRatio the produce lane refuses (ErrDiskFull); once usage
// falls below diskRecoverRatio it accepts again (the same hysteresis as
// RocketMQ's CleanCommitLogService, which marks the disk full above
// diskSpaceWarningLevelRatio and OK again below diskSpaceCleanForciblyRatio).
func (w *Writer) diskGuardLoop() {
	defer w.faultWG.Done()
	t := time.NewTicker(w.opts.DiskCheckInterval)
	defer t.Stop()
	full := false
	for {
		ratio, _, err := w.store.DiskUsage()
		switch {
		case err != nil:
			w.log.Warn().Err(err).Msg("disk usage check failed")
		case !full && ratio > w.opts.DiskWarningRatio:
			full = true
			w.lanes.setDiskFull(true)
			w.m.diskFull.Set(1)
			w.log.Error().Float64("usedRatio", ratio).Float64("warningRatio", w.opts.DiskWarningRatio).
				Msg("disk usage above the warning level; refusing SENDs")
		case full && ratio < w.diskRecoverRatio():
			full = false
			w.lanes.setDiskFull(false)
			w.m.diskFull.Set(0)
			if failed, _ := w.lanes.state(); failed != nil {
				w.log.Warn().Float64("usedRatio", ratio).
					Msg("disk usage back below the warning level; SENDs wait for the store to recover from its failed write")
			} else {
				w.log.Warn().Float64("usedRatio", ratio).Msg("disk usage back below the warning level; accepting SENDs")
			}
		}
		select {
		case <-w.stopFault:
			return
		case <-t.C:
		}
	}
}

// diskRecoverHysteresis is how far below DiskWarningRatio usage must fall
// before SENDs are accepted again: 0.05, RocketMQ's defaults 0.90 − 0.85
// (diskSpaceWarningLevelRatio − diskSpaceCleanForciblyRatio).
const diskRecoverHysteresis = 0.05

func (w *Writer) diskRecoverRatio() float64 { return w.opts.DiskWarningRatio - diskRecoverHysteresis }
