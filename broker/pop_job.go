package broker

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/broker/longpoll"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// PopJob is one POP request from the moment it leaves the event loop until
// it is answered. It runs on a reader goroutine; a woken or contended
// request runs again with the same job. Fields are immutable after
// newPopJob.
type PopJob struct {
	s              *Service
	h              PopRequest
	done           func(PopResult, error) // called once: the answer
	meta           popstore.TopicMeta
	filter         *longpoll.Filter
	deadlineMillis int64 // end of the long poll, broker clock
	// maxBytes bounds this run's reply body: Settings.MaxPopBytes capped
	// by the reply room (reply_room.go). Set by Run.
	maxBytes int
	// room is the reply room this run holds (reserveReply): maxBytes
	// during its read, then its answer's bytes until the answer is given
	// or the op takes them. Reader goroutine.
	room      int64
	keys      []longpoll.Key // what wakes it: the topic and its pop retry topics
	seqStripe int            // popSeq stripe of (group, topic)
	// taker stands for this request in the registry's takerTable from its
	// arrival until it is answered, queued for a reader, running or parked,
	// so a peer POP of the group scanning meanwhile leaves the messages its
	// filter matches (taking is true while registered).
	taker  *longpoll.Poll
	taking atomic.Bool
	// spins counts the waits of an orderly run for a contended queue lock
	// (orderSpin).
	spins atomic.Int32
}

// StartTaking registers j.taker once: when the request arrives (and, as a
// fallback, at its first run). Event loop or reader.
func (j *PopJob) StartTaking() {
	if j.taking.CompareAndSwap(false, true) {
		j.s.Polls.AddTaker(j.taker)
	}
}

// EndTaking unregisters j.taker: the request was answered, or its
// connection is gone. Any goroutine; idempotent.
func (j *PopJob) EndTaking() {
	if j.taking.CompareAndSwap(true, false) {
		j.s.Polls.RemoveTaker(j.taker)
	}
}

// newPopJob returns the job of one validated POP request h, over topic
// meta with subscription filter filter (TAG or SQL92; nil: every
// message), long-polling until deadline (broker clock, Unix ms),
// answering through done. Caller's goroutine.
func newPopJob(s *Service, h PopRequest, done func(PopResult, error),
	meta popstore.TopicMeta, filter *longpoll.Filter, deadline int64) *PopJob {
	j := &PopJob{
		s: s, h: h, done: done, meta: meta, filter: filter, deadlineMillis: deadline,
		keys: []longpoll.Key{
			{Topic: h.Topic, QueueID: h.QueueID},
			{Topic: codec.PopRetryTopicV2(h.ConsumerGroup, h.Topic), QueueID: longpoll.AnyQueue},
			{Topic: codec.PopRetryTopicV1(h.ConsumerGroup, h.Topic), QueueID: longpoll.AnyQueue},
		},
		seqStripe: stripeOf(h.ConsumerGroup + "@" + h.Topic),
	}
	if h.Order {
		// Index orderKeyIndex: woken when a lease of the topic ends.
		j.keys = append(j.keys, OrderWakeKey(h.Topic))
	}
	j.taker = &longpoll.Poll{Keys: j.keys, Group: h.ConsumerGroup, Filter: filter}
	return j
}

// popSource is one queue a POP reads: a queue of the requested topic
// (flag 0) or of one of its pop retry topics.
type popSource struct {
	topic   string
	queueID int32
	flag    codec.RetryFlag
}

// offsetCommit is one consume-offset advance of a POP. read/hadRead are
// the committed offset the POP started from (hadRead false: none): the
// advance applies only if that is still the stored value when the writer
// applies it, so an offset reset (UPDATE_CONSUMER_OFFSET) accepted after
// the POP read the offset wins over the POP's advance.
type offsetCommit struct {
	topic   string
	queueID int32
	offset  int64
	read    int64
	hadRead bool
}

// popOutcome is what one run of a POP collected.
type popOutcome struct {
	popTime     int64
	held        []queueLockKey // locks to release when the op completes
	cks         []popstore.Checkpoint
	commits     []offsetCommit
	body        []byte
	typed       []typedRef // PopRequest.Records: the records in body
	startInfo   []byte
	msgInfo     []byte
	found       int
	foundRetry  int
	rest        int64
	retryFound  bool  // one retry flavour already contributed
	filterBound bool  // a tag scan stopped at maxScanPerQueue: more to scan
	readErr     error // first store read error
	// seen holds the maxOffset of every queue looked at, for the long-poll
	// registry (parkedPoll.seeds).
	seen []longpoll.QueueMax
	// handoff lists the queues where a filtered scan stopped at a message
	// an outstanding POP of the group wants (see handoff).
	handoff []longpoll.Key
	// Orderly POP only (order.go): contended: a queue lock was taken by
	// another request; blocked: queues found blocked for this POP; open: the
	// queues it could read; leases: the leases to write; orderInfo:
	// orderCountInfo.
	contended bool
	blocked   int
	open      []int32
	leases    []orderLease
	orderInfo []byte
	lease     *orderLease // the queue being read (appendRecord)
	// rb holds the records of the queue being read (readQueue) during
	// collect, nil outside it.
	rb *popstore.ReadBuffer
}

// popReadBuffers recycles the memory POP reads copy records into: a record
// lives only until appendRecord has copied it into the reply.
var popReadBuffers = sync.Pool{New: func() any { return new(popstore.ReadBuffer) }}

// maxPooledReadBuffer bounds the read buffer kept for the next POP, bytes:
// a larger one (a POP of large messages) is left to the garbage collector.
const maxPooledReadBuffer = 1 << 20

// Run executes the POP on a reader goroutine (submit it with SubmitRead).
// A panic before the writer took the POP's op is recovered here (recover):
// the queue locks it holds are released and the request is answered
// SYSTEM_ERROR, so one bad request neither leaves a queue locked nor stops
// the reader.
func (j *PopJob) Run() {
	s := j.s
	o := &popOutcome{}
	owned := true // o.held is ours to release until the writer has the op
	defer func() {
		if v := recover(); v != nil {
			j.recover(v, o, owned)
		}
	}()
	if s.Polls.ConnGone(j.h.ConnID) {
		j.EndTaking() // the client is gone: read nothing, answer nothing
		return
	}
	j.StartTaking()
	s.Polls.CountPopRun()
	if j.maxBytes = s.reserveReply(s.Settings.MaxPopBytes); j.maxBytes == 0 {
		// Clients hold the reply bound: read nothing until they read.
		if j.h.PollTime <= 0 || !s.retryForRoom(j.h.ConnID, j.deadlineMillis, j.rerun, j.EndTaking) {
			j.fail(errPollingTimeout)
		}
		return
	}
	j.room = int64(j.maxBytes)
	seen := s.Polls.Snapshot(j.keys)
	j.collect(o)
	j.keepRoom(int64(len(o.body)))
	if o.contended {
		j.keepRoom(0)
		j.release(o)
		j.orderSpin(o, seen)
		return
	}
	if len(o.cks) == 0 && len(o.commits) == 0 {
		j.keepRoom(0)
		j.release(o)
		j.finishEmpty(o, seen)
		return
	}
	group := j.h.ConsumerGroup
	if s.Settings.Hooks != nil {
		if hook := s.Settings.Hooks.BeforeSubmit.Load(); hook != nil {
			(*hook)()
		}
	}
	// The answer's room belongs to the op once submitted: Done gives it
	// back after the answer is counted where it goes.
	pending := j.room
	op := &batch.Op{
		Lane:  batch.LaneForeground,
		Bytes: 64*len(o.cks) + 32*len(o.commits),
		Apply: func(tx *popstore.Txn) error {
			for i := range o.cks {
				if err := tx.PutCheckpoint(o.cks[i]); err != nil {
					return err
				}
			}
			for _, oc := range o.commits {
				// Compare-and-set on the writer, against the batch's
				// pending writes: a reset accepted since the read wins.
				if cur, ok := tx.ConsumerOffset(group, oc.topic, oc.queueID); cur != oc.read || ok != oc.hadRead {
					s.Log.Info().Str("group", group).Str("topic", oc.topic).Int32("queueId", oc.queueID).
						Int64("read", oc.read).Int64("stored", cur).Msg("pop: consume offset changed meanwhile (reset), advance dropped")
					continue
				}
				if err := tx.SetConsumerOffset(group, oc.topic, oc.queueID, oc.offset); err != nil {
					return err
				}
			}
			return j.putLeases(tx, o)
		},
		Done: func(err error) {
			// The room goes back after the answer is given, so the
			// adapter counts it (remoting's held replies, HoldReply)
			// before others may take it.
			defer func() { s.releaseReply(pending) }()
			j.release(o)
			if errors.Is(err, errLeaseMoved) {
				s.releaseReply(pending)
				pending = 0
				j.rerun() // an ACK or CHANGE moved a lease since the read
				return
			}
			if err != nil {
				s.Log.Error().Err(err).Str("group", group).Str("topic", j.h.Topic).Msg("pop: checkpoint write failed")
				j.fail(&Error{Code: codec.SystemError, Remark: "pop checkpoint write failed: " + err.Error()})
				return
			}
			if len(o.cks) > 0 {
				s.Revive.NoteDurable(o.popTime + j.h.InvisibleTime)
			}
			for _, l := range o.leases {
				s.scheduleOrderWake(group, l.topic, l.queueID, l.next)
			}
			if o.found > 0 {
				j.replySuccess(o)
				return
			}
			j.finishEmpty(o, seen)
		},
	}
	// From here Done (completer goroutine) may release o.held and the
	// room at any time.
	owned, j.room = false, 0
	if err := s.Writer.Submit(op); err != nil {
		s.releaseReply(pending)
		j.release(o)
		j.fail(SubmitError("pop", err))
	}
}

// recover handles a panic v of Run: it logs it with the stack, releases the
// queue locks o still holds when owned (after Submit they belong to the
// op's Done), and answers SYSTEM_ERROR. A panic after the request was
// parked or answered may answer it twice; the client drops the reply whose
// opaque it no longer waits for. Reader goroutine.
func (j *PopJob) recover(v any, o *popOutcome, owned bool) {
	j.s.Log.Error().Str("panic", fmt.Sprint(v)).Bytes("stack", debug.Stack()).
		Str("group", j.h.ConsumerGroup).Str("topic", j.h.Topic).Msg("pop: job panicked; queue locks released, answered SYSTEM_ERROR")
	if owned {
		j.keepRoom(0)
		j.release(o)
	}
	j.fail(Errorf(codec.SystemError, "pop failed: internal error: %v", v))
}

// keepRoom keeps n bytes of the reply room this run holds and gives back
// the rest. Reader goroutine.
func (j *PopJob) keepRoom(n int64) {
	j.s.releaseReply(j.room - n)
	j.room = n
}

// collect reads every source queue in RocketMQ's order into o: the
// response body, the checkpoints, the offset advances and the queue locks
// taken (o.held, recorded as soon as each is taken).
func (j *PopJob) collect(o *popOutcome) {
	s := j.s
	o.rb = popReadBuffers.Get().(*popstore.ReadBuffer)
	defer func() {
		if o.rb.Cap() <= maxPooledReadBuffer {
			popReadBuffers.Put(o.rb)
		}
		o.rb = nil
	}()
	o.popTime = s.nowMillis()
	seq := s.popSeq[j.seqStripe].Add(1) - 1
	retryFirst := s.Settings.RetryFirstEvery > 0 && seq%s.Settings.RetryFirstEvery == 0
	retry := j.retrySources()
	if retryFirst {
		j.readRetry(o, retry)
	}
	if j.h.Order {
		retryFirst, retry = false, nil // orderly POP reads the topic only
	}
	if j.h.QueueID >= 0 {
		j.readQueue(o, popSource{j.h.Topic, j.h.QueueID, codec.RetryFlagNormal})
	} else if n := uint64(j.meta.ReadQueueNums); n > 0 {
		for i := range n {
			j.readQueue(o, popSource{j.h.Topic, int32((seq + i) % n), codec.RetryFlagNormal})
		}
	}
	if !retryFirst {
		j.readRetry(o, retry)
	}
}

// retrySources lists the queues of the existing pop retry topics of
// (group, topic): V2 first, then V1.
func (j *PopJob) retrySources() []popSource {
	var out []popSource
	for _, s := range [...]struct {
		name string
		flag codec.RetryFlag
	}{
		{j.keys[1].Topic, codec.RetryFlagV2},
		{j.keys[2].Topic, codec.RetryFlagV1},
	} {
		m, ok := j.s.Topics.Get(s.name)
		if !ok {
			continue
		}
		for q := range m.ReadQueueNums {
			out = append(out, popSource{s.name, q, s.flag})
		}
	}
	return out
}

// readRetry reads retry sources until one flavour returned messages (the
// Java client must not see V1 and V2 retry messages in one response).
func (j *PopJob) readRetry(o *popOutcome, sources []popSource) {
	for _, s := range sources {
		if o.retryFound {
			return
		}
		j.readQueue(o, s)
	}
}

// unlockQueue releases one queue lock and wakes the polls a contended lock
// may have turned away.
func (j *PopJob) unlockQueue(k queueLockKey) {
	if j.s.locks.unlock(k) {
		// One waiter of the group is enough: if it finds more than it takes
		// it wakes the next (replySuccess), if it finds nothing it parks again.
		j.s.Polls.WakeSome(k.topic, k.queueID, k.group, 1)
	}
}

// handoff wakes, for each queue where the scan stopped at a message an
// outstanding POP of the group wants, one such POP if parked (tag-aware, see
// broker/longpoll/wake.go). Called once this request is parked or answered, not
// before: a wake-up bumps the topic's epoch, and a request parking after
// its own handoff would re-run and stop at the same message again.
func (j *PopJob) handoff(o *popOutcome) {
	for _, k := range o.handoff {
		j.s.Polls.WakeSome(k.Topic, k.QueueID, j.h.ConsumerGroup, 1)
	}
}

func (j *PopJob) release(o *popOutcome) {
	for _, k := range o.held {
		j.unlockQueue(k)
	}
	o.held = nil
}
