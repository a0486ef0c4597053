package broker

import (
	"errors"
	"slices"
	"time"

	"github.com/popshim/popshim/broker/longpoll"
	"github.com/popshim/popshim/broker/orderly"
	"github.com/popshim/popshim/popstore"
)

// Orderly (FIFO) POP: the POP job's lease handling, the wake-ups of POPs
// and NOTIFICATIONs parked on a blocked queue, and the writer-side ACK and
// CHANGE of orderly receipts (reviveQid 999). The rules are package
// broker/orderly's; this file applies them inside writer ops.

// orderKeyIndex is the index of OrderWakeKey in an orderly PopJob's keys.
const orderKeyIndex = 3

// orderWakeSuffix makes the long-poll key of a topic's lease ends; topic
// names cannot hold 0x00, so it names no real topic.
const orderWakeSuffix = "\x00order"

// OrderWakeKey is the long-poll key an orderly POP or NOTIFICATION waits on
// while the queues it may read are blocked: woken when a lease of topic
// ends (ACK, CHANGE to a past deadline, invisibleTime passing), never by
// appends (docs/SCENARIOS.md POLL-03). Any goroutine.
func OrderWakeKey(topic string) longpoll.Key {
	return longpoll.Key{Topic: topic + orderWakeSuffix, QueueID: longpoll.AnyQueue}
}

// maxOrderSpins bounds how often one orderly POP waits orderSpinDelay for a
// queue lock held by another request before answering as if empty.
const maxOrderSpins = 4000

// orderSpinDelay is the wait between two tries of a contended queue lock.
const orderSpinDelay = 500 * time.Microsecond

// errLeaseMoved fails a POP's op when a lease it read changed before the
// op was applied (an ACK or CHANGE in between); the POP runs again.
var errLeaseMoved = errors.New("broker: orderly lease changed since the POP read it")

// orderLease is one lease an orderly POP writes: prev/had as read under
// the queue lock, next the new one.
type orderLease struct {
	topic      string
	queueID    int32
	prev, next popstore.OrderState
	had        bool
}

// putLeases writes o's leases if none changed since the read (writer
// goroutine, inside the POP's op).
func (j *PopJob) putLeases(tx *popstore.Txn, o *popOutcome) error {
	group := j.h.ConsumerGroup
	for _, l := range o.leases {
		cur, ok := tx.OrderState(group, l.topic, l.queueID)
		if ok != l.had || (ok && !sameLease(cur, l.prev)) {
			return errLeaseMoved
		}
		if err := tx.PutOrderState(group, l.topic, l.queueID, l.next); err != nil {
			return err
		}
	}
	return nil
}

func sameLease(a, b popstore.OrderState) bool {
	return a.PopTime == b.PopTime && a.Acked == b.Acked && a.AttemptID == b.AttemptID &&
		slices.Equal(a.Offsets, b.Offsets) && slices.Equal(a.VisibleAt, b.VisibleAt)
}

// orderSpin handles an orderly run that met a queue lock held by another
// request (its own locks are already released): it runs again after
// orderSpinDelay, as the Java broker spins on the lock (RocketMQ PR
// #10828), up to maxOrderSpins times; then it answers as an empty run.
func (j *PopJob) orderSpin(o *popOutcome, seen []uint64) {
	if j.spins.Add(1) <= maxOrderSpins {
		time.AfterFunc(orderSpinDelay, j.rerun)
		return
	}
	j.spins.Store(0)
	j.finishEmpty(&popOutcome{popTime: o.popTime, seen: o.seen}, seen)
}

// orderParkKeys returns what an empty orderly run waits on, with their
// epochs from seen (the snapshot of j.keys): the queues it could read
// (appends there wake it) and the lease ends of the topic, not the queues
// blocked for it, whose appends cannot give it anything (docs/SCENARIOS.md
// POLL-03). Epochs are per topic, so a queue key takes the topic's.
func (j *PopJob) orderParkKeys(o *popOutcome, seen []uint64) ([]longpoll.Key, []uint64) {
	keys := make([]longpoll.Key, 0, len(o.open)+1)
	epochs := make([]uint64, 0, len(o.open)+1)
	for _, q := range o.open {
		keys = append(keys, longpoll.Key{Topic: j.h.Topic, QueueID: q})
		epochs = append(epochs, seen[0])
	}
	keys = append(keys, j.keys[orderKeyIndex])
	epochs = append(epochs, seen[orderKeyIndex])
	return keys, epochs
}

// OrderBlocked reports whether (group, topic, queueID) is blocked for an
// orderly request with attemptID now (NOTIFICATION). In-memory: event loop.
func (s *Service) OrderBlocked(group, topic string, queueID int32, attemptID string) bool {
	st, ok := s.Store.OrderState(group, topic, queueID)
	return ok && orderly.Blocked(st, attemptID, s.nowMillis())
}

// OrderChanged is called once a write that changed the lease of (group,
// topic, queueID) is durable (completer goroutine): if the queue is no
// longer held, the group's parked orderly POPs and NOTIFICATIONs wake now;
// else they wake when it ends.
func (s *Service) OrderChanged(group, topic string, queueID int32) {
	st, ok := s.Store.OrderState(group, topic, queueID)
	if !ok {
		s.WakeOrder(group, topic, queueID)
		return
	}
	s.scheduleOrderWake(group, topic, queueID, st)
}

// scheduleOrderWake (re)arms the timer that wakes the group's parked
// orderly requests when lease st of (group, topic, queueID) ends; wakes at
// once when st holds nothing now. Any goroutine.
func (s *Service) scheduleOrderWake(group, topic string, queueID int32, st popstore.OrderState) {
	now := s.nowMillis()
	at, held := orderly.FreeAt(st, now)
	k := queueLockKey{group, topic, queueID}
	s.orderMu.Lock()
	if t := s.orderTimers[k]; t != nil {
		t.Stop()
		delete(s.orderTimers, k)
	}
	if held && !s.orderClosed {
		if s.orderTimers == nil {
			s.orderTimers = make(map[queueLockKey]*time.Timer)
		}
		var t *time.Timer
		t = time.AfterFunc(time.Duration(at-now+1)*time.Millisecond, func() {
			s.orderMu.Lock()
			if s.orderTimers[k] == t {
				delete(s.orderTimers, k)
			}
			closed := s.orderClosed
			s.orderMu.Unlock()
			if !closed {
				s.OrderChanged(group, topic, queueID)
			}
		})
		s.orderTimers[k] = t
	}
	s.orderMu.Unlock()
	if !held {
		s.WakeOrder(group, topic, queueID)
	}
}

// WakeOrder wakes every orderly POP and NOTIFICATION of group parked on
// topic's lease ends (OrderWakeKey). Any goroutine.
func (s *Service) WakeOrder(group, topic string, queueID int32) {
	s.Polls.WakeSome(OrderWakeKey(topic).Topic, queueID, group, 0)
}

// ScheduleOrderWakes arms the wake-up of every stored lease still held
// (start-up, after a restart with blocked queues). Any goroutine.
func (s *Service) ScheduleOrderWakes() {
	for _, l := range s.Store.OrderStates() {
		if _, held := orderly.FreeAt(l.State, s.nowMillis()); held {
			s.scheduleOrderWake(l.Group, l.Topic, l.QueueID, l.State)
		}
	}
}

// stopOrderWakes stops every armed lease timer (Close).
func (s *Service) stopOrderWakes() {
	s.orderMu.Lock()
	s.orderClosed = true
	for k, t := range s.orderTimers {
		t.Stop()
		delete(s.orderTimers, k)
	}
	s.orderMu.Unlock()
}
