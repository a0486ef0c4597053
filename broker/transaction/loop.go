package transaction

import (
	"errors"
	"math"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/broker/dueloop"
	"github.com/popshim/popshim/popstore"
)

// ChunkItems bounds the halves handled by one writer op of the loop (and
// held in memory by it at once).
const ChunkItems = 256

// chunkBytes also closes a chunk once its records reach this many bytes.
const chunkBytes = 4 << 20

// Settings are the check-back knobs (BrokerConfig's names in brackets).
type Settings struct {
	// Interval is the pause between rounds of one half, and the longest
	// the loop sleeps (transactionCheckInterval, 30 s;
	// --transaction-check-interval).
	Interval time.Duration
	// TimeoutMillis is how long after its store time a half is first
	// checked unless it carries CHECK_IMMUNITY_TIME_IN_SECONDS
	// (transactionTimeOut, 6 s; --transaction-timeout).
	TimeoutMillis int64
	// CheckMax is the number of rounds after which a half moves to
	// CheckMaxTopic (transactionCheckMax, 15; --transaction-check-max).
	CheckMax int32
}

// Deps are the broker pieces a Loop works with. All fields are required
// except Checker-related state, installed later with SetChecker.
type Deps struct {
	Log    zerolog.Logger
	Store  *popstore.Store // scans halves (loop goroutine)
	Writer *batch.Writer   // one background-lane op per chunk
	// Now is the broker clock, Unix ms: the scan bound and the store time
	// of moved messages.
	Now func() int64
	// BrokerName fills the checks' bname.
	BrokerName string
	// EnsureCheckMaxTopic makes CheckMaxTopic exist (1 queue, perm 6) when
	// it does not, without waiting for its persistence; called on the loop
	// goroutine before a chunk moves halves there.
	EnsureCheckMaxTopic func() error
	Settings            Settings
	Metrics             *Metrics
}

// Loop is the check-back service (TransactionalMessageCheckService): one
// pass at a time, on its own goroutine, scan one chunk of halves due now,
// write their new check counts (or their move to CheckMaxTopic) in one
// background-lane op, wait for it, then hand each checked half to the
// Checker.
type Loop struct {
	d       Deps
	checker atomic.Pointer[checkerRef]
	// Runner schedules the passes (Start, Stop, Trigger, Passes).
	*dueloop.Runner
	// from is where the next scan starts: past the last entry handled, so
	// scans do not step over its tombstones again, or back to the earliest
	// half made durable behind it (TakeLowest). Loop goroutine only.
	from popstore.HalfDue
	// graceUntil (broker clock, Unix ms) is when the first round may run:
	// one Interval after Start, as TransactionalMessageCheckService waits
	// an interval before its first check. Halves left overdue by a restart
	// would otherwise use up a round before any producer has reconnected
	// and sent the HEART_BEAT that makes it reachable. Set before the
	// goroutine starts; read by it only.
	graceUntil int64
}

// checkerRef boxes a Checker for the atomic pointer.
type checkerRef struct{ c Checker }

// New returns a stopped loop over d; Start launches it.
func New(d Deps) *Loop {
	if d.Settings.Interval <= 0 {
		d.Settings.Interval = 30 * time.Second
	}
	l := &Loop{d: d}
	l.Runner = dueloop.New(d.Now, l.pass)
	return l
}

// Start launches the loop's goroutine; its first round of checks runs one
// Interval later (a pass before that only waits). Call once, before any
// other goroutine uses the loop's Runner.
func (l *Loop) Start() {
	l.graceUntil = l.d.Now() + l.d.Settings.Interval.Milliseconds()
	l.Runner.Start()
}

// Settings returns the loop's settings. Any goroutine.
func (l *Loop) Settings() Settings { return l.d.Settings }

// Metrics returns the transaction series (Deps.Metrics). Any goroutine.
func (l *Loop) Metrics() *Metrics { return l.d.Metrics }

// SetChecker installs the Checker the loop sends checks through (nil
// removes it: rounds are still counted, nothing is sent). Any goroutine,
// any time; the next check uses it.
func (l *Loop) SetChecker(c Checker) {
	if c == nil {
		l.checker.Store(nil)
		return
	}
	l.checker.Store(&checkerRef{c})
}

// NoteHalf reports a half made durable with its first check due at
// dueMillis (call from the op's completion); it wakes the loop when that
// is before its next planned pass. Any goroutine, never blocks.
func (l *Loop) NoteHalf(dueMillis int64) {
	l.Note(dueMillis)
}

// item is one due half and what the pass does with it.
type item struct {
	half    popstore.Half
	discard bool   // move to CheckMaxTopic (or drop when final is nil)
	final   []byte // the moved record (discard only)
	keepTo  int64  // discard: keep the half for a late decision until then (0: delete it)
	expire  bool   // a discarded half whose keep ran out: delete it
	applied bool   // the op found the half as scanned and wrote
}

// pass handles one chunk and returns how long to wait before the next.
func (l *Loop) pass() time.Duration {
	d := l.d
	now := d.Now()
	if wait := l.graceUntil - now; wait > 0 {
		return time.Duration(wait) * time.Millisecond // halves noted meanwhile stay noted (TakeLowest)
	}
	if lo := l.TakeLowest(); lo <= l.from.DueMillis {
		l.from = popstore.HalfDue{DueMillis: lo}
	}
	due, err := d.Store.ScanHalves(l.from, now, ChunkItems, chunkBytes)
	if err != nil && len(due) == 0 {
		d.Log.Error().Err(err).Msg("transaction: scan of half messages failed")
		return d.Settings.Interval
	}
	if len(due) == 0 {
		next, ok, err := d.Store.NextHalfDue(l.from)
		if err != nil || !ok {
			return d.Settings.Interval
		}
		return min(time.Duration(max(next-d.Now(), 0))*time.Millisecond, d.Settings.Interval)
	}
	items := l.classify(due, now)
	if err := l.commit(items, now); err != nil {
		d.Log.Error().Err(err).Int("halves", len(items)).Msg("transaction: check round not written, retrying")
		return d.Settings.Interval
	}
	l.from = due[len(due)-1].Due().After()
	l.report(items)
	return 0 // another pass at once: more may be due; an empty one reads the next due time
}

// classify decides per due half: discard when its rounds are used up or it
// is older than the store's retention (needDiscard, needSkip), else check.
func (l *Loop) classify(due []popstore.Half, now int64) []item {
	keep := l.d.Store.RetentionMillis()
	items := make([]item, len(due))
	for i := range due {
		h := due[i]
		it := item{half: h, expire: h.Discarded}
		stored, _ := popstore.StoreTimestamp(h.Record)
		if !h.Discarded && (h.Checks >= l.d.Settings.CheckMax || (keep > 0 && now-stored > keep)) {
			it.discard = true
			it.keepTo = keepUntil(stored, keep, now)
			f, err := DiscardRecord(&h, now)
			if err != nil {
				l.d.Log.Error().Err(err).Int64("commitLogOffset", h.PhysicalOffset).Msg("transaction: undecodable half message dropped")
			} else {
				it.final = f.Record
			}
		}
		items[i] = it
	}
	return items
}

// commit writes one chunk's rounds and moves as one background-lane op
// and waits for it.
func (l *Loop) commit(items []item, now int64) error {
	bytes, moves := 0, false
	for i := range items {
		bytes += 64 + len(items[i].final)
		moves = moves || items[i].final != nil
	}
	if moves && l.d.EnsureCheckMaxTopic != nil {
		if err := l.d.EnsureCheckMaxTopic(); err != nil {
			l.d.Log.Warn().Err(err).Msg("transaction: " + CheckMaxTopic + " not created; moving halves there anyway")
		}
	}
	next := now + l.d.Settings.Interval.Milliseconds()
	done := make(chan error, 1)
	op := &batch.Op{
		Lane:  batch.LaneBackground,
		Bytes: bytes,
		Apply: func(tx *popstore.Txn) error { return applyRound(tx, items, next) },
		Done:  func(err error) { done <- err },
	}
	for {
		err := l.d.Writer.Submit(op)
		if err == nil {
			break
		}
		if !errors.Is(err, batch.ErrBusy) {
			return err
		}
		select {
		case <-l.Quit():
			return err
		case <-time.After(10 * time.Millisecond):
		}
	}
	return <-done
}

// applyRound is the op of one chunk (writer goroutine): each half still as
// scanned gets its round (or its move); a half decided or changed since
// the scan is left alone.
func applyRound(tx *popstore.Txn, items []item, nextDue int64) error {
	for i := range items {
		it := &items[i]
		it.applied = false
		cur, ok, err := tx.GetHalf(it.half.PhysicalOffset)
		if err != nil {
			return err
		}
		if !ok || cur.Checks != it.half.Checks || cur.DueMillis != it.half.DueMillis || cur.Discarded != it.half.Discarded {
			continue
		}
		switch {
		case it.expire:
			_, err = tx.DeleteHalf(cur.PhysicalOffset)
		case it.discard:
			err = discard(tx, it)
		default:
			_, err = tx.UpdateHalfCheck(cur.PhysicalOffset, cur.Checks+1, nextDue)
		}
		if err != nil {
			return err
		}
		it.applied = true
	}
	return nil
}

// discard moves a copy of the half to CheckMaxTopic (unless it cannot be
// converted) and keeps the half itself for a late END_TRANSACTION until
// it.keepTo, as Java's commit log keeps a half after
// TransactionalMessageCheckService gave up on it; with no time left it
// deletes it (writer goroutine).
func discard(tx *popstore.Txn, it *item) error {
	if it.final != nil {
		_, _, err := tx.AppendMessage(CheckMaxTopic, 0, it.final)
		if errors.Is(err, popstore.ErrBadRecord) || errors.Is(err, popstore.ErrBadName) {
			it.final = nil
		} else if err != nil {
			return err
		}
	}
	var err error
	if it.keepTo > 0 {
		_, err = tx.DiscardHalf(it.half.PhysicalOffset, it.keepTo)
	} else {
		_, err = tx.DeleteHalf(it.half.PhysicalOffset)
	}
	return err
}

// keepUntil is when a discarded half stored at stored stops taking a late
// decision: when the store's retention would delete a message stored
// with it (never, with retention off), or 0 when that time has passed.
func keepUntil(stored, keep, now int64) int64 {
	switch {
	case keep <= 0:
		return math.MaxInt64
	case stored+keep > now:
		return stored + keep
	default:
		return 0
	}
}

// report sends the checks of a durable round and counts its outcome
// (loop goroutine).
func (l *Loop) report(items []item) {
	d := l.d
	var checker Checker
	if r := l.checker.Load(); r != nil {
		checker = r.c
	}
	for i := range items {
		it := &items[i]
		if !it.applied {
			continue
		}
		h := it.half
		if it.expire {
			d.Log.Info().Int64("commitLogOffset", h.PhysicalOffset).Str("producerGroup", h.ProducerGroup).
				Msg("transaction: discarded half message expired; a late END_TRANSACTION no longer finds it")
			continue
		}
		if it.discard {
			d.Metrics.CheckMax.Inc()
			d.Log.Error().Int64("commitLogOffset", h.PhysicalOffset).Int64("tranStateTableOffset", h.Seq).
				Int32("checks", h.Checks).Str("producerGroup", h.ProducerGroup).Bool("copied", it.final != nil).
				Int64("lateDecisionUntil", it.keepTo).
				Msg("transaction: half message checked too many times or too old, moved to " + CheckMaxTopic)
			continue
		}
		d.Metrics.Checks.Inc()
		h.Checks++
		c, err := CheckOf(&h, d.BrokerName)
		if err != nil {
			d.Metrics.Unsent.Inc()
			d.Log.Error().Err(err).Int64("commitLogOffset", h.PhysicalOffset).Msg("transaction: half message cannot be checked")
			continue
		}
		if checker == nil || !checker.Check(c) {
			d.Metrics.Unsent.Inc()
			d.Log.Warn().Str("producerGroup", h.ProducerGroup).Int64("commitLogOffset", h.PhysicalOffset).
				Msg("transaction: check not sent, no producer of the group connected")
			continue
		}
		d.Log.Debug().Str("producerGroup", h.ProducerGroup).Int64("commitLogOffset", h.PhysicalOffset).
			Int32("checks", h.Checks).Str("msgId", c.MsgID).Msg("transaction: check sent")
	}
}
