package batch

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/popshim/popshim/popstore"
)

// Writer persists ops. In ModeGroup one goroutine takes whatever is queued
// (no deliberate delay), applies every op to one popstore.Txn, commits it
// with one synced write and hands the batch to a completer goroutine that
// calls the ops' Done in accept order; while it
// writes, new ops accumulate, so the batch size follows fsync latency. In
// ModeSync, SyncWorkers goroutines each write one op at a time.
//
// Submit may be called from any goroutine, including the gnet event loop: it
// never blocks on I/O.
type Writer struct {
	store *popstore.Store
	opts  Options
	log   zerolog.Logger
	lanes *lanes
	bgMax int
	m     *metrics

	wg        sync.WaitGroup // writer goroutines
	closeOnce sync.Once

	// storeMu is held shared while ops are applied and committed, and
	// exclusively by the recovery probe while it reopens the store.
	storeMu   sync.RWMutex
	probing   atomic.Bool
	stopFault chan struct{} // closed by Close: stops the probe and disk guard
	faultWG   sync.WaitGroup
	// faultMu orders startProbe's faultWG.Add against Close's faultWG.Wait:
	// the writer goroutine may start a probe while Close is running.
	faultMu      sync.Mutex
	faultStopped bool // set under faultMu by Close; no probe starts after it
	ret          *retention
	retMu        sync.Mutex // serializes retention passes
	retFloor     int64      // physical-offset index already trimmed below this
	// scope brackets each group-mode batch's completion (SetCompletionScope).
	scope atomic.Pointer[scopeBox]
}

// CompletionScope brackets the completion of one group-commit batch:
// Begin before the first op's Done, End after the last, on the goroutine
// that completes the batch (the completer, or the writer at light load),
// one batch at a time. remoting.ReplyScope is one: the replies of a batch
// to one connection leave with one sendmsg at End.
type CompletionScope interface {
	Begin()
	End()
}

// scopeBox lets an interface live in an atomic.Pointer.
type scopeBox struct{ s CompletionScope }

// SetCompletionScope sets the scope of later batches' completions (nil:
// none). Group mode only; sync-mode workers complete their ops alone. Any
// goroutine.
func (w *Writer) SetCompletionScope(s CompletionScope) {
	if s == nil {
		w.scope.Store(nil)
		return
	}
	w.scope.Store(&scopeBox{s})
}

// Stats are cumulative counters since New.
type Stats struct {
	Batches   uint64           // WriteBatches committed or attempted (with at least one op)
	Mutations uint64           // ops completed (any result)
	Failed    uint64           // ops completed with an error
	Fsyncs    uint64           // synced db.Write calls issued
	WriteTime time.Duration    // total time inside those calls (WAL append, fsync, memtable)
	Rejects   [numLanes]uint64 // Submit calls answered ErrBusy, per lane
}

// New starts a writer over store. reg receives the writer's Prometheus
// metrics (nil: not registered). The caller closes the writer before the
// store. Errors: invalid options, metric registration conflicts.
func New(store *popstore.Store, opts Options, reg prometheus.Registerer) (*Writer, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	w := &Writer{store: store, opts: o, lanes: newLanes(o.LaneCapacity, o.MaxQueuedBytes, o.MaxProduceWait),
		stopFault: make(chan struct{})}
	if o.Logger != nil {
		w.log = o.Logger.With().Str("component", "batch").Logger()
	} else {
		w.log = zerolog.Nop()
	}
	w.bgMax = max(1, int(float64(o.MaxBatchOps)*o.BackgroundShare))
	w.m = newMetrics(w)
	if reg != nil {
		if err := w.m.register(reg); err != nil {
			return nil, err
		}
	}
	switch o.Mode {
	case ModeGroup:
		w.wg.Add(1)
		go w.groupLoop()
	case ModeSync:
		for i := 0; i < o.SyncWorkers; i++ {
			w.wg.Add(1)
			go w.syncWorker()
		}
	}
	if o.DiskWarningRatio > 0 {
		w.faultWG.Add(1)
		go w.diskGuardLoop()
	}
	var retainEvery time.Duration // 0: no retention passes, only page releases
	if o.RetentionInterval > 0 && store.RetentionMillis() >= 0 {
		retainEvery = o.RetentionInterval
	}
	if retainEvery > 0 || o.MappedReleaseInterval > 0 {
		w.ret = startRetention(w, retainEvery)
	}
	w.log.Info().Str("mode", string(o.Mode)).Int("maxBatchOps", o.MaxBatchOps).
		Int("maxBatchBytes", o.MaxBatchBytes).Int("maxBulkOps", o.MaxBulkOps).Int("laneCapacity", o.LaneCapacity).
		Int("syncWorkers", o.SyncWorkers).Msg("writer started")
	return w, nil
}

// Mode returns the writer's mode.
func (w *Writer) Mode() Mode { return w.opts.Mode }

// Submit queues op without blocking. nil: accepted, and op.Done will be
// called exactly once. ErrBusy (lane full, or Options.MaxQueuedBytes
// reached), ErrClosed, ErrFailed (a failed write awaits recovery),
// ErrDiskFull (LaneProduce above the disk warning level), ErrBadOp or
// ErrBadLane: not queued, Done will not be called. ErrFailed and
// ErrDiskFull refusals count as failed mutations. Any goroutine.
func (w *Writer) Submit(op *Op) error {
	err := w.lanes.push(op)
	switch {
	case err == nil:
	case errors.Is(err, ErrBusy):
		w.m.rejects[op.Lane].Inc()
	case errors.Is(err, ErrFailed), errors.Is(err, ErrDiskFull):
		w.m.failedN.Add(1)
	}
	return err
}

// SubmitWait submits an op with the given lane and apply function and blocks
// until it is durable or failed. For tests, the CLI and startup code only —
// never on the event loop or the writer goroutine (it would deadlock).
func (w *Writer) SubmitWait(lane Lane, apply func(tx *popstore.Txn) error) error {
	ch := make(chan error, 1)
	op := &Op{Lane: lane, Apply: apply, Done: func(err error) { ch <- err }}
	if err := w.Submit(op); err != nil {
		return err
	}
	return <-ch
}

// Accepted returns how many ops Submit has accepted on lane since New
// (ErrBadLane lanes: 0). Background loops compare two readings to see
// whether latency-sensitive work arrived meanwhile. Any goroutine, lock-free.
func (w *Writer) Accepted(lane Lane) uint64 {
	if lane >= numLanes {
		return 0
	}
	return w.lanes.accepted[lane].Load()
}

// Err returns the failure awaiting recovery (wrapping ErrFailed), or nil.
func (w *Writer) Err() error { return w.lanes.failure() }

// Stats returns the cumulative counters. Any goroutine.
func (w *Writer) Stats() Stats {
	s := Stats{
		Batches:   w.m.batchesN.Load(),
		Mutations: w.m.mutationsN.Load(),
		Failed:    w.m.failedN.Load(),
		Fsyncs:    w.m.fsyncsN.Load(),
		WriteTime: time.Duration(w.m.writeNanos.Load()),
	}
	for l := Lane(0); l < numLanes; l++ {
		s.Rejects[l] = w.lanes.rejected(l)
	}
	return s
}

// Close stops accepting ops (Submit returns ErrClosed), stops retention,
// the recovery probe and the disk guard, writes and completes everything
// already accepted, and returns when every writer goroutine has exited. It
// does not close the store; close the store after Close returns (safe in
// the failed state: the store skips its WAL flush then). Returns the
// failure awaiting recovery, if any. Idempotent.
func (w *Writer) Close() error {
	w.closeOnce.Do(func() {
		if w.ret != nil {
			w.ret.stop()
		}
		w.faultMu.Lock()
		w.faultStopped = true
		close(w.stopFault)
		w.faultMu.Unlock()
		w.faultWG.Wait()
		w.lanes.close()
		w.wg.Wait()
		w.log.Info().Uint64("batches", w.m.batchesN.Load()).Uint64("mutations", w.m.mutationsN.Load()).Msg("writer closed")
	})
	return w.lanes.failure()
}

// complete calls op.Done with err, counting it. A panicking Done is a bug in
// its caller; it is logged and contained so that the writer goroutine, and
// with it every other waiting request, survives.
func (w *Writer) complete(op *Op, err error) {
	w.m.mutationsN.Add(1)
	if err != nil {
		var shed *QueueTimeoutError // escapes: declared here, it costs nothing on success
		if !errors.As(err, &shed) { // shed ops count as rejects
			w.m.failedN.Add(1)
		}
	}
	if op.Done == nil && op.Job == nil {
		return
	}
	defer func() {
		if p := recover(); p != nil {
			w.log.Error().Interface("panic", p).Str("lane", op.Lane.String()).Msg("batch: Done callback panicked")
		}
	}()
	op.done(err)
}

// afterWriteError decides whether a failed write stops the writer:
// anything but popstore.ErrWriteRejected does. Then all later Submits fail
// until the probe recovers (startProbe), and the ops still queued are
// returned, to be completed with ferr (the failure) after the failed
// batch's own ops.
func (w *Writer) afterWriteError(err error) (queued []*Op, ferr error) {
	if errors.Is(err, popstore.ErrWriteRejected) {
		w.log.Warn().Err(err).Msg("write rejected before the WAL; batch failed, writer continues")
		return nil, nil
	}
	w.log.Error().Err(err).Msg("synced write failed; refusing work until the store is reopened")
	w.m.failedGauge.Set(1)
	queued = w.lanes.fail(err)
	ferr = w.lanes.failure()
	w.startProbe()
	return queued, ferr
}
