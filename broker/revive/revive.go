package revive

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/popshim/popshim/broker/dueloop"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// reviveBackoffSeconds is the extra invisibility added after the n-th failed
// revive attempt (PopConsumerService.REWRITE_INTERVALS_IN_SECONDS).
var reviveBackoffSeconds = [...]int64{10, 30, 60, 120, 180, 240, 300, 360, 420, 480, 540, 600, 1200, 1800, 3600, 7200}

// Scanner contract (PopConsumerService.revive): each pass scans
// [cursor − reviveLookbackMillis, now − reviveSlackMillis).
const (
	reviveLookbackMillis = 3000
	reviveSlackMillis    = 50
)

// Reviver is the background loop that turns expired checkpoints into
// retry-topic (or DLQ) copies. One pass at a time: scan, read the original
// messages (on this goroutine, never the writer or an event loop), then ONE
// background-lane op that, per checkpoint still present, appends the copy
// and deletes the checkpoint (at-least-once: both in one WriteBatch, so a
// crash leaves either both or neither). A checkpoint acked or changed after
// the scan is found missing inside the writer and skipped. The pass waits
// for its op before the next scan (or it would revive a record twice) and
// only then moves the cursor.
// The cursor lives in memory; a restart rescans from 0.
//
// A checkpoint can become durable with a deadline already behind the
// cursor's lookback (a write stalled for longer than the lookback while the
// invisibleTime was short). Every write that creates a checkpoint therefore
// reports its deadline once durable (NoteDurable); the next pass starts its
// scan at the lowest one reported since the previous pass when that lies
// below cursor − lookback. The goroutine, its wake-ups and that lowest
// deadline are a dueloop.Runner's, as for timer delivery and transaction
// checks.
type Reviver struct {
	d      Deps
	set    *Settings // shared with the broker; read at each use
	run    *dueloop.Runner
	cursor int64 // only the Runner's goroutine (pass) touches it
	// retryLow is the lowest noted deadline a failed pass could not scan
	// past, kept for the next pass (math.MaxInt64: none). Kept here rather
	// than noted again, which would wake the loop at once and spin it
	// while the store keeps failing. The Runner's goroutine only.
	retryLow int64
	ops      atomic.Uint64 // writer ops submitted by passes (one per chunk)
	// failed counts passes in a row whose write failed, and failLogged is
	// when the last of them was logged: while the store is down a pass
	// fails every retry, so the log names the first failure and then one
	// a failLogEvery. The Runner's goroutine only.
	failed     int
	failLogged time.Time
}

// failLogEvery spaces the log lines of passes that keep failing.
const failLogEvery = 30 * time.Second

// noteWriteFailed logs a pass whose write failed: the first of a run at
// once, later ones a failLogEvery apart. The Runner's goroutine only.
func (r *Reviver) noteWriteFailed(err error, checkpoints int) {
	r.failed++
	if r.failed > 1 && time.Since(r.failLogged) < failLogEvery {
		return
	}
	r.failLogged = time.Now()
	r.d.Log.Error().Err(err).Int("checkpoints", checkpoints).Int("failedPasses", r.failed).
		Msg("revive: pass not written, retrying later")
}

// noteWritten ends a run of failed passes, logging how long it was. The
// Runner's goroutine only.
func (r *Reviver) noteWritten() {
	if r.failed > 0 {
		r.d.Log.Warn().Int("failedPasses", r.failed).Msg("revive: passes are written again")
		r.failed = 0
	}
}

type reviveKind uint8

const (
	reviveRetry   reviveKind = iota // put the copy, delete the checkpoint
	reviveDrop                      // message gone: delete the checkpoint only
	reviveBackoff                   // could not read or write: reschedule
)

type reviveItem struct {
	ck      popstore.Checkpoint
	kind    reviveKind
	plan    retryPlan
	skipped bool // checkpoint gone by the time the writer applied the pass
	dropped bool // backoff exhausted or message gone
	// rescheduledAt is the new deadline of a checkpoint rescheduled with
	// backoff (0: not rescheduled).
	rescheduledAt int64
}

// New returns a stopped reviver over d with the knobs of *set, which it
// reads at each use (the broker owns them; tests may change them before
// traffic); Start launches its goroutine. d's fields must all be set.
func New(set *Settings, d Deps) *Reviver {
	r := &Reviver{d: d, set: set, cursor: reviveLookbackMillis, retryLow: math.MaxInt64}
	r.run = dueloop.New(d.Now, func() time.Duration {
		if r.pass() >= r.set.Batch {
			return 0 // a full batch: more may be due at once
		}
		return r.set.Interval
	})
	return r
}

// NoteDurable tells the reviver that a checkpoint with deadline
// visibleAtMillis (broker clock, Unix ms) is now durable, so the next pass
// scans from there if the cursor already moved past it. Call from the
// batch.Op Done callback (after the fsync) of every write that puts or
// replaces a checkpoint; any goroutine, never blocks. A deadline before
// the planned next pass wakes the loop early.
func (r *Reviver) NoteDurable(visibleAtMillis int64) { r.run.Note(visibleAtMillis) }

// Start launches the revive goroutine. Call once.
func (r *Reviver) Start() { r.run.Start() }

// Stop ends the loop after its current pass (whose writes still go
// through the writer) and waits for it; safe when never started,
// idempotent. Call before the writer closes.
func (r *Reviver) Stop() { r.run.Stop() }

// Trigger asks for a pass now (non-blocking; tests and the injected
// clock). Any goroutine.
func (r *Reviver) Trigger() { r.run.Trigger() }

// pass runs one revive pass and returns how many checkpoints it scanned.
// The Runner's goroutine only.
func (r *Reviver) pass() int {
	d := r.d
	low := min(r.run.TakeLowest(), r.retryLow)
	r.retryLow = math.MaxInt64
	upper := d.Now() - reviveSlackMillis
	cks, err := d.Store.ScanCheckpoints(min(r.cursor-reviveLookbackMillis, low), upper, r.set.Batch)
	if err != nil {
		d.Log.Error().Err(err).Int("scanned", len(cks)).Msg("revive: checkpoint scan failed")
		if len(cks) == 0 {
			r.retryLow = low
			return 0
		}
	}
	d.Metrics.Passes.Inc()
	if len(cks) == 0 {
		r.cursor = upper
		d.Metrics.LagMillis.Set(0)
		return 0
	}
	// Planned a chunk at a time and each chunk written before the next is
	// planned: a plan holds a full retry copy, so planning the whole pass
	// first held up to reviveBatch copies of messages up to 4 MiB each.
	items := make([]reviveItem, 0, min(len(cks), ChunkItems))
	for done := 0; done < len(cks); {
		items = items[:0]
		bytes := 0
		for done < len(cks) && len(items) < ChunkItems && bytes < reviveChunkBytes {
			it := r.plan(cks[done])
			done++
			bytes += len(it.plan.record)
			items = append(items, it)
		}
		if err := r.commitChunk(items); err != nil {
			r.noteWriteFailed(err, len(cks)-done+len(items))
			r.retryLow = low
			return 0
		}
		for i := range items {
			if items[i].rescheduledAt != 0 {
				r.NoteDurable(items[i].rescheduledAt)
			}
		}
		r.noteWritten()
		r.account(items)
		clear(items) // drop the retry copies before planning the next chunk
	}
	r.cursor = cks[len(cks)-1].Key.VisibleAtMillis
	d.Metrics.LagMillis.Set(float64(max(upper-r.cursor, 0)))
	return len(cks)
}

// plan reads the message of one expired checkpoint and decides its fate.
func (r *Reviver) plan(ck popstore.Checkpoint) reviveItem {
	d := r.d
	it := reviveItem{ck: ck, kind: reviveBackoff}
	rec, err := d.Store.ReadMessage(ck.Key.Topic, ck.Key.QueueId, ck.Key.QueueOffset)
	switch {
	case errors.Is(err, popstore.ErrNotFound):
		it.kind = reviveDrop
		return it
	case err != nil:
		d.Log.Warn().Err(err).Str("topic", ck.Key.Topic).Int64("queueOffset", ck.Key.QueueOffset).Msg("revive: read failed")
		return it
	}
	// The checkpoint names the popped message's physical offset: when the
	// queue offset now holds another message (topic deleted and re-created,
	// docs/SCENARIOS.md REV-07), the popped one is gone. Records without it
	// (format version 1) skip the check.
	if ck.PhysicalOffset >= 0 && len(rec) >= codec.RecordPhysicalOffsetPos+8 {
		if m, _, err := codec.UnsafeDecodeMessage(rec); err == nil && m.PhysicalOffset != ck.PhysicalOffset {
			it.kind = reviveDrop
			return it
		}
	}
	p, err := r.planRetry(&ck, rec)
	if err != nil {
		d.Log.Error().Err(err).Str("topic", ck.Key.Topic).Int64("queueOffset", ck.Key.QueueOffset).Msg("revive: cannot build retry copy")
		return it
	}
	create := func() error { _, err := d.Topics.GetOrCreate(p.topic); return err }
	if p.dlq {
		create = func() error { _, err := d.Topics.EnsureDLQTopic(ck.Key.Group); return err }
	}
	if err := r.ensureTopic(p.topic, create); err != nil {
		d.Log.Warn().Err(err).Str("topic", p.topic).Msg("revive: cannot create target topic")
		return it
	}
	it.kind, it.plan = reviveRetry, p
	return it
}

// ensureTopic makes sure the target topic's metadata is durable before the
// retry copy is written, so a copy never lands in a topic the broker does
// not know (the TopicTable persists new topics asynchronously and forgets
// them again when that write fails). Runs on the revive goroutine; waits
// at most a few seconds.
func (r *Reviver) ensureTopic(name string, create func() error) error {
	d := r.d
	for range 3 {
		if _, ok := d.Store.Topic(name); ok {
			return nil
		}
		if err := create(); err != nil {
			return err
		}
		deadline := time.Now().Add(2 * time.Second)
		for time.Now().Before(deadline) {
			if _, ok := d.Store.Topic(name); ok {
				return nil
			}
			if _, ok := d.Topics.Get(name); !ok {
				break // its write failed and the table dropped it: create again
			}
			select {
			case <-r.run.Quit():
				return errReviveStopped
			case <-time.After(2 * time.Millisecond):
			}
		}
	}
	return fmt.Errorf("revive: topic %s not persisted", name)
}

// errReviveStopped: the broker is closing.
var errReviveStopped = errors.New("revive: stopped")

// Passes returns how many passes completed since New (tests wait on it).
// Any goroutine.
func (r *Reviver) Passes() uint64 { return r.run.Passes() }

// Ops returns how many writer ops passes submitted since New, one per
// chunk of at most ChunkItems checkpoints (tests). Any goroutine.
func (r *Reviver) Ops() uint64 { return r.ops.Load() }

// isSystemTopic returns the is_system label of a topic: "true" for
// rmq_sys_ topics and TBW102 (as handler's POP metrics label it).
func isSystemTopic(topic string) string {
	return strconv.FormatBool(strings.HasPrefix(topic, codec.SystemTopicPrefix) || topic == codec.AutoCreateTopicKey)
}
