package batch

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/rs/zerolog"

	"github.com/popshim/popshim/popstore"
)

// Lane is the class of a mutation. Each lane has its own bounded queue; every
// batch takes all the foreground work it can, caps the bulk and background
// work, and fills up with produce work, so a CHANGE burst, a revive burst or
// a produce flood delays an ACK by at most one small batch.
type Lane uint8

const (
	// LaneForeground: latency-sensitive foreground work — ACK, BATCH_ACK,
	// POP checkpoints.
	LaneForeground Lane = iota
	// LaneProduce: SEND (message appends).
	LaneProduce
	// LaneBackground: revive, retention, offset maintenance, admin.
	LaneBackground
	// LaneBulk: foreground work that arrives in bursts and may wait behind
	// latency-sensitive foreground work (CHANGE_INVISIBLE_TIME). In group
	// mode each batch takes at most Options.MaxBulkOps of it, so ops of
	// this lane can complete after foreground ops accepted later: use it
	// only for ops whose reordering against LaneForeground is harmless. In
	// sync mode it is served like LaneForeground, in accept order.
	LaneBulk
	numLanes
)

// String returns "foreground", "produce", "background" or "bulk" (metric
// label).
func (l Lane) String() string {
	switch l {
	case LaneForeground:
		return "foreground"
	case LaneProduce:
		return "produce"
	case LaneBackground:
		return "background"
	case LaneBulk:
		return "bulk"
	}
	return fmt.Sprintf("lane(%d)", uint8(l))
}

// Errors returned by Submit (and passed to Done by the writer).
var (
	// ErrBusy: the op's lane is full. Returned at once by Submit; nothing was
	// queued and Done will not be called. Handlers answer SYSTEM_BUSY (2).
	ErrBusy = errors.New("batch: queue full")
	// ErrClosed: Submit after Close. Nothing queued; Done not called.
	ErrClosed = errors.New("batch: writer closed")
	// ErrFailed: an earlier synced write failed with an error that leaves the
	// WAL in an unknown state, so the writer refuses all work (an fsync is
	// never retried) until its probe has reopened the store and a synced
	// write succeeded (Options.ProbeInterval). Returned by Submit, and
	// passed to Done of ops that were queued at the time. The error also
	// wraps the original write error (errors.Is finds both). Handlers
	// answer SEND with SERVICE_NOT_AVAILABLE (14), everything else with
	// SYSTEM_ERROR (1).
	ErrFailed = errors.New("batch: writer stopped after a failed write")
	// ErrBadLane: Op.Lane is not one of the four lanes.
	ErrBadLane = errors.New("batch: invalid lane")
	// ErrBadOp: Op.Job is set together with Op.Apply or Op.Done, or holds
	// a nil pointer.
	ErrBadOp = errors.New("batch: op sets Job and Apply/Done")
)

// Op is one mutation: one request's worth of writes (an ACK, one BATCH_ACK,
// one CHANGE, the checkpoints and offset advance of one POP, one SEND, one
// revive step).
//
// The writer owns the Op from a successful Submit until Done returns; do not
// reuse or modify it meanwhile.
type Op struct {
	// Lane selects the queue; see Lane.
	Lane Lane
	// Bytes is the caller's estimate of the op's size (record bytes for a
	// SEND; ~100 for an ACK), used for Options.MaxBatchBytes. 0 is fine.
	Bytes int
	// Apply adds the op's writes to the batch being built. It runs on the
	// writer goroutine (sync mode: on a worker), one op at a time, and must
	// not block on anything but RocksDB reads. If it returns an error (or
	// panics) none of its writes are kept; Done then gets that error and the
	// other ops of the batch are unaffected. nil Apply writes nothing.
	Apply func(tx *popstore.Txn) error
	// Done is called exactly once after the batch holding the op was written
	// with sync=true (err == nil: durable), or failed (err: the Apply
	// error, the write error, or ErrFailed). In group mode it runs on the
	// writer's completer goroutine, in accept order, possibly while the next
	// batch is being applied and written; in sync mode on the worker that
	// wrote it. It must not block (encode the reply and hand it to the
	// connection). nil Done is allowed. Once Done returns the writer does
	// not touch the op again: its owner may reuse it (a pooled job).
	Done func(err error)
	// Job, when set, replaces Apply and Done (both must then be nil): the
	// writer calls Job.Apply and Job.Done under the same rules. It lets a
	// caller keep its request state, the Op and both callbacks in one
	// allocation (a struct that embeds Op and implements Job) instead of an
	// Op plus two closures; the ACK and CHANGE handlers do this.
	Job Job
	// MaxWait, for a LaneProduce op, replaces Options.MaxProduceWait as
	// the queue wait after which the op is shed (while shedding is on:
	// MaxProduceWait > 0); negative: never shed; 0: MaxProduceWait. An
	// END_TRANSACTION commit waits up to --wait-time-mills-in-transaction-queue
	// (RocketMQ's waitTimeMillsInTransactionQueue, 3 s) where a SEND waits
	// 200 ms.
	MaxWait time.Duration
	// PastByteBound lets Submit accept the op while Options.MaxQueuedBytes
	// are queued (the lane's QueueCapacity still applies; its Bytes still
	// count): for a small op its client sends once and never again, a
	// oneway END_TRANSACTION, which the bound would drop unseen under a
	// flood of large SENDs. Java queues those apart from SENDs
	// (endTransactionPoolQueueCapacity).
	PastByteBound bool

	seq    uint64 // accept order, set by Submit
	queued int64  // monoNanos at Submit (head-of-line wait metric)
	err    error  // Apply result
}

// shedAfter is how long op may wait in the produce lane, ns, before it is
// shed when shedding is on with def (Options.MaxProduceWait) as the
// default: Op.MaxWait when set, never (math.MaxInt64) when negative.
func (op *Op) shedAfter(def time.Duration) int64 {
	switch {
	case op.MaxWait < 0:
		return math.MaxInt64
	case op.MaxWait > 0:
		return int64(op.MaxWait)
	}
	return int64(def)
}

// Job is the method form of Op.Apply and Op.Done; see Op.Job. Apply runs on
// the writer goroutine (sync mode: a worker), Done exactly once after the
// synced write, with the same contracts as the Op fields.
type Job interface {
	Apply(tx *popstore.Txn) error
	Done(err error)
}

// apply runs the op's writes on tx (Job or Apply); nil when it has none.
func (op *Op) apply(tx *popstore.Txn) error {
	switch {
	case op.Job != nil:
		return tx.Do(op.Job.Apply)
	case op.Apply != nil:
		return tx.Do(op.Apply)
	}
	return nil
}

// done calls Job.Done or Done, if any.
func (op *Op) done(err error) {
	switch {
	case op.Job != nil:
		op.Job.Done(err)
	case op.Done != nil:
		op.Done(err)
	}
}

// Mode chooses how mutations are made durable.
type Mode string

const (
	// ModeGroup (default): one writer goroutine persists everything queued
	// in one synced WriteBatch, then completes each op.
	ModeGroup Mode = "group"
	// ModeSync: the baseline of the Java broker — each op is written with its
	// own synced db.Write by one of SyncWorkers workers
	// (--pop-write-mode=sync). RocksDB's own write-group joining applies.
	ModeSync Mode = "sync"
)

// ParseMode accepts "group" and "sync" (the --pop-write-mode values).
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case ModeGroup, ModeSync:
		return Mode(s), nil
	}
	return "", fmt.Errorf("batch: --pop-write-mode must be group or sync, got %q", s)
}

// DefaultMaxBulkOps is the default of Options.MaxBulkOps: 16 ops per batch,
// about 0.3 ms of writer time for CHANGEs. Measured with the broker bench
// (docs/PERFORMANCE.md): 8–16 keep ACK p99 during 2 000-CHANGE bursts near
// its value outside them; 64 and more let the burst through fast enough to
// raise it again; 8 doubles CHANGE latency over 16.
const DefaultMaxBulkOps = 16

// DefaultMaxQueuedBytes is the default of Options.MaxQueuedBytes: 256 MiB.
const DefaultMaxQueuedBytes = 256 << 20

// Options configures New. Zero values take the defaults given.
type Options struct {
	// Mode: ModeGroup (default) or ModeSync.
	Mode Mode
	// SyncWorkers: workers in ModeSync. Default 16, as RocketMQ's
	// ackMessageThreadPoolNums.
	SyncWorkers int
	// MaxBatchOps caps the ops in one WriteBatch (--batch-max-ops).
	// Default 4096.
	MaxBatchOps int
	// MaxBatchBytes caps the sum of Op.Bytes in one WriteBatch
	// (--batch-max-bytes). Default 8 MiB. A single larger op still forms a
	// batch of its own.
	MaxBatchBytes int
	// LaneCapacity bounds each lane's queue, ops. Default 100000, as
	// RocketMQ's ackThreadPoolQueueCapacity.
	LaneCapacity int
	// BackgroundShare caps the background lane at this fraction of
	// MaxBatchOps per batch (at least one op). Default 0.25.
	BackgroundShare float64
	// MaxBulkOps caps the ops taken from LaneBulk per batch
	// (--batch-max-bulk-ops), so a burst of bulk work (a CHANGE burst) is
	// spread over many batches and delays latency-sensitive foreground ops
	// by at most this many bulk ops (~15–25 µs of server CPU each for a
	// CHANGE) plus 1/256 of the bulk backlog (so a sustained overload still
	// drains). Default DefaultMaxBulkOps. Group mode only.
	MaxBulkOps int
	// RetentionInterval is how often retention runs (plan on a background
	// goroutine, range deletes through the background lane). Default 10
	// minutes; negative disables. Retention is also off when the store's
	// retention is disabled.
	RetentionInterval time.Duration
	// MaxQueuedBytes bounds the sum of Op.Bytes queued in all lanes
	// (--queue-max-bytes): a Submit that would pass it while anything is
	// queued returns ErrBusy (SYSTEM_BUSY), so queued request memory stays
	// near this bound whatever the message size. Default 256 MiB.
	MaxQueuedBytes int64
	// MaxProduceWait: a LaneProduce op still queued after this long is
	// shed — completed with a *QueueTimeoutError, not written — when a
	// batch is next taken (--wait-time-mills-in-send-queue; RocketMQ's
	// waitTimeMillsInSendQueue is 200 ms). 0 disables. Group mode checks the
	// queue at every batch; sync mode when a worker takes the op.
	MaxProduceWait time.Duration
	// ProbeInterval is how often, after a failed synced write, the writer
	// tries to reopen the store and write a synced probe; Submit refuses
	// with ErrFailed until one succeeds. Default 1 s; negative: never
	// recover (the failure stays until restart).
	ProbeInterval time.Duration
	// DiskWarningRatio: while the store's filesystem is used above this
	// fraction, LaneProduce Submits return ErrDiskFull
	// (--disk-space-warning-level-ratio; RocketMQ's
	// diskSpaceWarningLevelRatio, 0.90). Accepted again below it minus
	// 0.05. 0 disables the check.
	DiskWarningRatio float64
	// DiskCleanForciblyRatio: while the store's filesystem is used above
	// this fraction, each retention pass also deletes the oldest messages
	// before their retention ends: those stored in the oldest tenth of the
	// stored time span (at least a minute of it, never the last minute),
	// as a Java broker with cleanFileForciblyEnable deletes its oldest
	// commit-log files above diskSpaceCleanForciblyRatio (0.85). Runs only
	// with the retention loop (RetentionInterval > 0) or RunRetention.
	// 0 disables.
	DiskCleanForciblyRatio float64
	// DiskCheckInterval is how often the disk usage is read (one statfs).
	// Default 1 s.
	DiskCheckInterval time.Duration
	// MappedReleaseInterval is how often the retention loop unmaps the
	// commit-log pages that reads have mapped (Store.ReleaseMappedPages;
	// they stay in the page cache), so the process's RSS counts what it
	// holds, not what POPs read lately. Default 10 s; negative disables.
	// The retention loop runs it, also when retention itself is off.
	MappedReleaseInterval time.Duration
	// Logger; nil means zerolog.Nop().
	Logger *zerolog.Logger
}

func (o Options) withDefaults() (Options, error) {
	if o.Mode == "" {
		o.Mode = ModeGroup
	}
	if _, err := ParseMode(string(o.Mode)); err != nil {
		return o, err
	}
	if o.SyncWorkers == 0 {
		o.SyncWorkers = 16
	}
	if o.MaxBatchOps == 0 {
		o.MaxBatchOps = 4096
	}
	if o.MaxBatchBytes == 0 {
		o.MaxBatchBytes = 8 << 20
	}
	if o.LaneCapacity == 0 {
		o.LaneCapacity = 100000
	}
	if o.BackgroundShare == 0 {
		o.BackgroundShare = 0.25
	}
	if o.MaxBulkOps == 0 {
		o.MaxBulkOps = DefaultMaxBulkOps
	}
	if o.RetentionInterval == 0 {
		o.RetentionInterval = 10 * time.Minute
	}
	if o.MaxQueuedBytes == 0 {
		o.MaxQueuedBytes = DefaultMaxQueuedBytes
	}
	if o.ProbeInterval == 0 {
		o.ProbeInterval = time.Second
	}
	if o.DiskCheckInterval == 0 {
		o.DiskCheckInterval = time.Second
	}
	if o.MappedReleaseInterval == 0 {
		o.MappedReleaseInterval = 10 * time.Second
	}
	switch {
	case o.SyncWorkers < 1:
		return o, fmt.Errorf("batch: SyncWorkers must be ≥ 1, got %d", o.SyncWorkers)
	case o.MaxBatchOps < 1:
		return o, fmt.Errorf("batch: MaxBatchOps must be ≥ 1, got %d", o.MaxBatchOps)
	case o.MaxBatchBytes < 1:
		return o, fmt.Errorf("batch: MaxBatchBytes must be ≥ 1, got %d", o.MaxBatchBytes)
	case o.LaneCapacity < 1:
		return o, fmt.Errorf("batch: LaneCapacity must be ≥ 1, got %d", o.LaneCapacity)
	case o.BackgroundShare < 0 || o.BackgroundShare > 1:
		return o, fmt.Errorf("batch: BackgroundShare must be in (0, 1], got %g", o.BackgroundShare)
	case o.MaxBulkOps < 1:
		return o, fmt.Errorf("batch: MaxBulkOps must be ≥ 1, got %d", o.MaxBulkOps)
	case o.MaxQueuedBytes < 1:
		return o, fmt.Errorf("batch: MaxQueuedBytes must be ≥ 1, got %d", o.MaxQueuedBytes)
	case o.MaxProduceWait < 0:
		return o, fmt.Errorf("batch: MaxProduceWait must be ≥ 0, got %v", o.MaxProduceWait)
	case o.DiskWarningRatio < 0 || o.DiskWarningRatio > 1:
		return o, fmt.Errorf("batch: DiskWarningRatio must be in [0, 1], got %g", o.DiskWarningRatio)
	case o.DiskCleanForciblyRatio < 0 || o.DiskCleanForciblyRatio > 1:
		return o, fmt.Errorf("batch: DiskCleanForciblyRatio must be in [0, 1], got %g", o.DiskCleanForciblyRatio)
	case o.DiskCheckInterval < 0:
		return o, fmt.Errorf("batch: DiskCheckInterval must be > 0, got %v", o.DiskCheckInterval)
	}
	return o, nil
}
