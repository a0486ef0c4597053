package timer

// Cancelling pending timer messages (TIMER_DEL_UNIQKEY; RECALL_MESSAGE),
// as RocketMQ's TimerMessageStore does it: a deletion marker names a key
// (`<REAL_TOPIC>+<UNIQ_KEY>`, TimerMessageStore.buildDeleteKey) and a
// delivery time; when the timers of that time's slot are delivered, a
// timer message of that key in the same slot is dropped instead. Java's
// slot is its timer wheel's (timerPrecisionMs, 1 s by default: the
// delivery time floored to the second, a whole second counting to the
// second before, HookUtils.transformTimerMessage); SlotOf is that
// function, so a marker sent with the target's own delivery time, or with
// the recall handle's, finds it. Like Java's per-slot deleteUniqKeys set,
// the marker is matched whatever the order the two arrived in (a marker
// stored before its target still cancels it), cancels every timer message
// of its key in the slot, and is never delivered itself. Delay-level
// messages (no TIMER_OUT_MS) are never cancelled: Java keeps them out of
// the timer wheel.
//
// popshim keeps markers in their own key space (popstore timer_deletes.go)
// and consults them per delivery chunk (one range scan over the chunk's
// slots); the target's entry and record stay until its time, then are
// deleted in the delivery op without being appended. A marker is removed
// once its slot is over by more than markerGrace (purge), so a marker
// whose target never comes (or came after its time) costs nothing later.

import (
	"errors"
	"math"
	"time"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// SlotMillis is the timer slot width: Java's default timerPrecisionMs.
const SlotMillis = 1000

// markerGrace keeps a marker this long after its slot ended, for a target
// whose SEND was accepted before its time but became durable after it.
const markerGrace = time.Minute

// purgeEvery bounds how often an idle pass looks for markers to purge.
const purgeEvery = time.Second

// SlotOf returns the timer slot of a delivery time (Unix ms): the start of
// the second it falls in, or of the second before when it is a whole
// second. A deletion marker cancels the timer messages of its key whose
// slot is its own.
func SlotOf(deliverMillis int64) int64 {
	if deliverMillis%SlotMillis == 0 {
		return deliverMillis - SlotMillis
	}
	return deliverMillis - deliverMillis%SlotMillis
}

// DeleteKeyOf is the key a deletion marker names for the timer message of
// topic with UNIQ_KEY uniq (TimerMessageStore.buildDeleteKey).
func DeleteKeyOf(topic, uniq string) string { return topic + "+" + uniq }

// markerSet holds the markers of the slots one chunk covers.
type markerSet map[int64]map[string]struct{}

// markersFor loads the markers of every slot from the first to the last
// due time of due (in due order). Loop goroutine.
func (l *Loop) markersFor(due []popstore.Timer) (markerSet, error) {
	if len(due) == 0 {
		return nil, nil
	}
	from, to := SlotOf(due[0].Key.DueMillis), SlotOf(due[len(due)-1].Key.DueMillis)
	ms, err := l.d.Store.ScanTimerDeletes(from, to, math.MaxInt32)
	if err != nil || len(ms) == 0 {
		return nil, err
	}
	set := make(markerSet)
	for _, m := range ms {
		if set[m.SlotMillis] == nil {
			set[m.SlotMillis] = make(map[string]struct{})
		}
		set[m.SlotMillis][m.Key] = struct{}{}
	}
	return set, nil
}

// cancels reports whether a marker of set cancels the timer message m due
// at dueMillis.
func (set markerSet) cancels(m *codec.MessageExt, dueMillis int64) bool {
	keys := set[SlotOf(dueMillis)]
	if keys == nil {
		return false
	}
	if _, ok := codec.PropertyValue(m.Properties, codec.PropertyTimerOutMS); !ok {
		return false
	}
	uniq, ok := codec.PropertyValue(m.Properties, codec.PropertyUniqClientMessageIDKeyIdx)
	if !ok {
		return false
	}
	topic, ok := codec.PropertyValue(m.Properties, codec.PropertyRealTopic)
	if !ok {
		topic = m.Topic
	}
	_, hit := keys[DeleteKeyOf(topic, uniq)]
	return hit
}

// Cancelled returns how many timer messages deletion markers cancelled
// since start.
func (l *Loop) Cancelled() uint64 { return l.cancelled.Load() }

// purge removes, at most once per purgeEvery, the markers whose slot
// ended more than markerGrace before now; called by a pass that found
// nothing due, so every timer of those slots was delivered. Loop
// goroutine; waits for its op.
func (l *Loop) purge(now int64) {
	if now-l.lastPurge < purgeEvery.Milliseconds() {
		return
	}
	l.lastPurge = now
	to := now - markerGrace.Milliseconds() - SlotMillis
	if to < l.purgeFrom {
		return
	}
	old, err := l.d.Store.ScanTimerDeletes(l.purgeFrom, to, ChunkItems)
	if err != nil {
		return
	}
	if len(old) == 0 {
		l.purgeFrom = to + 1 // new markers name slots after now
		return
	}
	done := make(chan error, 1)
	op := &batch.Op{Lane: batch.LaneBackground, Bytes: 32 * len(old),
		Apply: func(tx *popstore.Txn) error {
			for _, m := range old {
				if err := tx.DeleteTimerDelete(m.SlotMillis, m.Key); err != nil {
					return err
				}
			}
			return nil
		},
		Done: func(err error) { done <- err },
	}
	if err := l.d.Writer.Submit(op); err != nil {
		if !errors.Is(err, batch.ErrBusy) {
			l.d.Log.Warn().Err(err).Msg("timer: deletion markers not purged")
		}
		return
	}
	if err := <-done; err != nil {
		l.d.Log.Warn().Err(err).Msg("timer: deletion markers not purged")
		return
	}
	if len(old) < ChunkItems {
		l.purgeFrom = to + 1
		return
	}
	l.purgeFrom = old[len(old)-1].SlotMillis // that slot may hold more keys
	l.lastPurge = 0                          // more may be over: look again at the next idle pass
}
