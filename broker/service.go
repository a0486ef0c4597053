package broker

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/broker/longpoll"
	"github.com/popshim/popshim/popstore"
)

// DurableNoter is told the deadline of every checkpoint made durable
// (revive.Reviver implements it).
type DurableNoter interface {
	// NoteDurable reports a checkpoint with deadline visibleAtMillis
	// (broker clock, Unix ms) durable; called from the writer's completer
	// goroutine, must not block.
	NoteDurable(visibleAtMillis int64)
}

// Topics is what the POP path needs of the topic table (broker/meta's
// TopicTable implements it).
type Topics interface {
	// Get returns the configuration of topic and whether it exists; any
	// goroutine, never blocks on storage.
	Get(topic string) (popstore.TopicMeta, bool)
}

// Service is the POP read path: the reader pool, the per-queue try-locks,
// POP jobs (read, checkpoint, answer or park) and receipt-handle checks.
// The broker fills the exported fields once, before Start, and never
// changes them; Settings' knobs may be changed by tests before traffic.
type Service struct {
	Log      zerolog.Logger     // write failures, offset-reset notes
	Store    *popstore.Store    // read by reader goroutines only
	Writer   *batch.Writer      // checkpoints and offset advances (foreground lane)
	Topics   Topics             // topic look-ups
	Settings *Settings          // shared with the broker
	Polls    *longpoll.Registry // where empty POPs park; takers and wake-ups
	Metrics  *Metrics           // messages and bytes out
	Revive   DurableNoter       // told every durable checkpoint deadline
	Now      func() int64       // broker clock, Unix ms

	locks   queueLocks
	readers *readerPool
	// replyPending counts the reply room reads have taken (reserveReply,
	// reply_room.go) and not yet handed to where their answers go.
	// Readers add under roomMu, releaseReply subtracts.
	replyPending atomic.Int64
	roomMu       sync.Mutex
	// replyOut counts the bytes of answers other adapters hold for their
	// clients (HoldReply, reply_room.go).
	replyOut atomic.Int64
	// popSeq counts POP requests per stripe of (group, topic): it drives
	// the retry-first ratio and the round-robin start queue of queueId -1.
	popSeq  [stripeCount]atomic.Uint64
	started atomic.Bool
	// orderTimers wake the requests parked on a held orderly lease when it
	// ends (order.go); orderClosed: Close stopped them.
	orderMu     sync.Mutex
	orderTimers map[queueLockKey]*time.Timer
	orderClosed bool
	startOnce   sync.Once
	closeOnce   sync.Once
}

func (s *Service) nowMillis() int64 { return s.Now() }

// Start launches the reader pool. Call once, before traffic; later calls
// do nothing.
func (s *Service) Start() {
	s.startOnce.Do(func() {
		s.readers = newReaderPool(s.Settings.Readers, s.Settings.ReaderQueue, s.Settings.MaxParkedPolls+s.Settings.ReaderQueue+64,
			func(v any, stack []byte) {
				s.Log.Error().Str("panic", fmt.Sprint(v)).Bytes("stack", stack).Msg("reader: job panicked; recovered, the worker goes on")
			})
		s.started.Store(true)
	})
}

// Close stops the reader pool after the jobs already queued. Call after
// the long-poll registry closed and before the writer closes; idempotent,
// safe if Start was never called.
func (s *Service) Close() {
	s.closeOnce.Do(func() {
		s.stopOrderWakes()
		if s.readers != nil {
			s.readers.close()
		}
	})
}

// SubmitRead queues a fresh job (a request arriving from the event loop)
// on the reader pool; false, at once, when the pool's queue is full or the
// pool is not started (the caller answers SYSTEM_BUSY). Any goroutine.
func (s *Service) SubmitRead(job func()) bool {
	if !s.started.Load() {
		return false
	}
	return s.readers.submit(job)
}

// ResubmitRead queues a re-run of a parked or contended request on the
// re-run queue (sized for every parked poll); false when the pool is not
// started or that queue is full. Any goroutine.
func (s *Service) ResubmitRead(job func()) bool {
	if !s.started.Load() {
		return false
	}
	return s.readers.resubmit(job)
}

// HeldLocks returns how many queue locks are held now (tests: every path
// must release what it took). Any goroutine.
func (s *Service) HeldLocks() int { return s.locks.heldCount() }

// TryLockQueue takes the POP lock of (group, topic, queueID) without
// waiting and reports success (tests: stands in for a POP in flight).
func (s *Service) TryLockQueue(group, topic string, queueID int32) bool {
	return s.locks.tryLock(queueLockKey{group, topic, queueID})
}

// UnlockQueue releases the POP lock of (group, topic, queueID) as a POP
// does when its write completes: a POP that skipped the queue meanwhile
// wakes one parked POP of the group. Any goroutine.
func (s *Service) UnlockQueue(group, topic string, queueID int32) {
	j := &PopJob{s: s}
	j.unlockQueue(queueLockKey{group, topic, queueID})
}
