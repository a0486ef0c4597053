package timer

import (
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/broker/dueloop"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// ChunkItems bounds the timers delivered by one writer op (and held in
// memory by the loop at once).
const ChunkItems = 256

// chunkBytes also closes a chunk once its records reach this many bytes.
const chunkBytes = 4 << 20

// maxIdle is the longest the loop sleeps between passes: the bound on how
// late a timer is when the clock jumps (tests move the broker clock) or a
// NoteDurable is missed.
const maxIdle = 100 * time.Millisecond

// Metrics are the Prometheus series the loop updates; the broker owns and
// registers them.
type Metrics struct {
	Pending   prometheus.Gauge     // rocketmq_timing_messages
	Delivered prometheus.Counter   // rocketmq_timer_dequeue_total
	Lateness  prometheus.Histogram // popshim_timer_lateness_milliseconds
	Dropped   prometheus.Counter   // popshim_timer_dropped_total
}

// Deps are the broker pieces a Loop works with. All fields are required.
type Deps struct {
	Log    zerolog.Logger
	Store  *popstore.Store // scans timers (loop goroutine)
	Writer *batch.Writer   // one background-lane op per chunk
	// TopicExists reports whether a topic is known; a due message whose
	// topic was deleted is dropped. Any goroutine, no I/O.
	TopicExists func(topic string) bool
	// Now is the broker clock, Unix ms: the scan bound and the store time
	// of delivered messages.
	Now     func() int64
	Metrics Metrics
	// DrainShare is the share of the writer's time a paced drain's ops
	// may take (--timer-drain-share, pace.go); 0 means defaultShare, 1
	// no pacing.
	DrainShare float64
}

// Loop delivers due timers. One pass at a time: scan one chunk of entries
// due now, convert them on this goroutine, then one background-lane op
// that appends each and deletes its entry; the pass waits for the op
// before the next scan, so an entry is never delivered twice by one
// process.
type Loop struct {
	d Deps
	// Runner schedules the passes (Start, Stop, Trigger, Passes).
	*dueloop.Runner
	// from is where the next scan starts: just past the last entry
	// delivered, so scans do not step over the tombstones of delivered
	// entries again (with 100,000 timers due at once, scanning from the
	// start made delivery quadratic), or back to the earliest entry made
	// durable behind it (TakeLowest). Loop goroutine only.
	from popstore.TimerKey
	pace pacer
	// cancelled counts timer messages deletion markers cancelled
	// (cancel.go); lastPurge and purgeFrom pace and resume the purge of
	// markers whose slot is over (loop goroutine only).
	cancelled atomic.Uint64
	lastPurge int64
	purgeFrom int64
}

// New returns a stopped loop over d; Start launches it.
func New(d Deps) *Loop {
	l := &Loop{d: d, pace: pacer{w: d.Writer, share: d.DrainShare}}
	l.Runner = dueloop.New(d.Now, l.pass)
	if l.pace.share <= 0 || l.pace.share > 1 {
		l.pace.share = defaultShare
	}
	d.Metrics.Pending.Set(float64(d.Store.PendingTimers()))
	return l
}

// NoteDurable reports a timer entry due at dueMillis made durable (call
// from the op's Done); it wakes the loop if that is before its next pass.
// Any goroutine, never blocks.
func (l *Loop) NoteDurable(dueMillis int64) {
	l.d.Metrics.Pending.Set(float64(l.d.Store.PendingTimers()))
	l.Note(dueMillis)
}

// pass delivers one chunk and returns how long to wait before the next.
func (l *Loop) pass() time.Duration {
	d := l.d
	now := d.Now()
	if lo := l.TakeLowest(); lo <= l.from.DueMillis {
		l.from = popstore.TimerKey{DueMillis: lo}
	}
	busy := l.pace.share < 1 && l.pace.busy()
	limit := chunkBytes
	if busy {
		limit = busyChunkBytes
	}
	due, err := d.Store.ScanTimers(l.from, now, ChunkItems, limit)
	if err != nil && len(due) == 0 {
		d.Log.Error().Err(err).Msg("timer: scan failed")
		return maxIdle
	}
	if len(due) == 0 {
		l.pace.drained = 0
		l.purge(now)
		next, ok, err := d.Store.NextTimerDue(l.from)
		if err != nil || !ok {
			return maxIdle
		}
		return min(time.Duration(max(next-d.Now(), 0))*time.Millisecond, maxIdle)
	}
	markers, err := l.markersFor(due)
	if err != nil {
		d.Log.Error().Err(err).Msg("timer: deletion markers not readable, delivery postponed")
		return maxIdle
	}
	l.pace.drained += len(due)
	items := make([]item, len(due))
	for i := range due {
		items[i] = l.convert(due[i], now, markers)
	}
	began := time.Now()
	if err := l.commit(items); err != nil {
		d.Log.Error().Err(err).Int("timers", len(items)).Msg("timer: delivery not written, retrying")
		return maxIdle
	}
	l.from = due[len(due)-1].Key.After()
	delivered := d.Now()
	for i := range items {
		switch {
		case items[i].cancelled:
			l.cancelled.Add(1)
			continue
		case items[i].record == nil:
			d.Metrics.Dropped.Inc()
			continue
		}
		d.Metrics.Delivered.Inc()
		d.Metrics.Lateness.Observe(float64(max(delivered-items[i].key.DueMillis, 0)))
	}
	d.Metrics.Pending.Set(float64(d.Store.PendingTimers()))
	if busy {
		return l.pace.rest(time.Since(began))
	}
	return 0 // another pass at once: more may be due; an empty one reads the next due time
}

// item is one due timer ready for the writer: record nil means drop
// (cancelled: a deletion marker named it).
type item struct {
	key       popstore.TimerKey
	topic     string
	queueID   int32
	record    []byte
	cancelled bool
}

// convert builds the delivered record of a timer entry: store timestamp
// now; DELAY, TIMER_DELIVER_MS and TIMER_DELAY_SEC removed for a delay
// level (as ScheduleMessageService.messageTimeUp); TIMER_DEQUEUE_MS and
// TIMER_ENQUEUE_MS added for a timer message (as TimerMessageStore); every
// other property, REAL_TOPIC and REAL_QID included, kept. A timer message
// a marker of markers names is cancelled instead.
func (l *Loop) convert(t popstore.Timer, now int64, markers markerSet) item {
	it := item{key: t.Key}
	m, _, err := codec.DecodeMessage(t.Record)
	if err != nil {
		l.d.Log.Error().Err(err).Int64("due", t.Key.DueMillis).Msg("timer: undecodable entry dropped")
		return it
	}
	if markers.cancels(&m, t.Key.DueMillis) {
		l.d.Log.Debug().Str("topic", m.Topic).Int64("due", t.Key.DueMillis).Msg("timer: message cancelled by a deletion marker")
		it.cancelled = true
		return it
	}
	if !l.d.TopicExists(m.Topic) {
		l.d.Log.Warn().Str("topic", m.Topic).Int64("due", t.Key.DueMillis).Msg("timer: topic no longer exists, message dropped")
		return it
	}
	props := m.Properties
	if _, ok := codec.PropertyValue(props, codec.PropertyTimerOutMS); ok {
		props, _ = codec.SetProperty(props, codec.PropertyTimerEnqueueMS, strconv.FormatInt(m.StoreTimestamp, 10))
		props, _ = codec.SetProperty(props, codec.PropertyTimerDequeueMS, strconv.FormatInt(now, 10))
	} else {
		// DELAY stays on the delivered message, as a Java broker's
		// ScheduleMessageService.messageTimeUp serialises the properties
		// before it clears the level: a consumer sees DELAY=n on a
		// delay-level message and on a retry copy (3 + reconsumeTimes).
		for _, k := range []string{codec.PropertyTimerDeliverMS, codec.PropertyTimerDelaySec} {
			props = codec.DeleteProperty(props, k)
		}
	}
	m.Properties = props
	m.StoreTimestamp = now
	m.QueueOffset, m.PhysicalOffset = 0, 0
	rec, err := codec.AppendMessage(nil, &m)
	if err != nil {
		l.d.Log.Error().Err(err).Int64("due", t.Key.DueMillis).Msg("timer: entry cannot be re-encoded, dropped")
		return it
	}
	it.topic, it.queueID, it.record = m.Topic, m.QueueID, rec
	return it
}

// commit writes one chunk as one background-lane op and waits for it.
func (l *Loop) commit(items []item) error {
	bytes := 0
	for i := range items {
		bytes += 32 + len(items[i].record)
	}
	done := make(chan error, 1)
	op := &batch.Op{
		Lane:  batch.LaneBackground,
		Bytes: bytes,
		Apply: func(tx *popstore.Txn) error {
			for i := range items {
				it := &items[i]
				if it.record != nil {
					_, _, err := tx.DeliverTimer(it.key, it.topic, it.queueID, it.record)
					if err == nil {
						continue
					}
					if !errors.Is(err, popstore.ErrBadName) && !errors.Is(err, popstore.ErrBadRecord) {
						return err
					}
					it.record = nil
				}
				if err := tx.DeleteTimer(it.key); err != nil {
					return err
				}
			}
			return nil
		},
		Done: func(err error) { done <- err },
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
