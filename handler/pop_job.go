package handler

import (
	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/remoting"
)

// popJob is one POP request from the moment it leaves the event loop until
// it is answered. It runs on a reader goroutine; a woken or contended
// request runs again with the same job. Fields are immutable after
// newPopJob.
type popJob struct {
	b              *Broker
	c              remoting.Conn
	req            *codec.Command
	h              codec.PopMessageRequestHeader
	meta           popstore.TopicMeta
	filter         *tagFilter
	deadlineMillis int64     // end of the long poll, broker clock
	keys           []pollKey // what wakes it: the topic and its pop retry topics
	seqStripe      int       // popSeq stripe of (group, topic)
}

func newPopJob(b *Broker, c remoting.Conn, req *codec.Command, h codec.PopMessageRequestHeader,
	meta popstore.TopicMeta, filter *tagFilter, deadline int64) *popJob {
	return &popJob{
		b: b, c: c, req: req, h: h, meta: meta, filter: filter, deadlineMillis: deadline,
		keys: []pollKey{
			{h.Topic, h.QueueID},
			{codec.PopRetryTopicV2(h.ConsumerGroup, h.Topic), anyQueue},
			{codec.PopRetryTopicV1(h.ConsumerGroup, h.Topic), anyQueue},
		},
		seqStripe: stripeOf(h.ConsumerGroup + "@" + h.Topic),
	}
}

// popSource is one queue a POP reads: a queue of the requested topic
// (flag 0) or of one of its pop retry topics.
type popSource struct {
	topic   string
	queueID int32
	flag    codec.RetryFlag
}

// offsetCommit is one consume-offset advance of a POP.
type offsetCommit struct {
	topic   string
	queueID int32
	offset  int64
}

// popOutcome is what one run of a POP collected.
type popOutcome struct {
	popTime     int64
	held        []queueLockKey // locks to release when the op completes
	cks         []popstore.Checkpoint
	commits     []offsetCommit
	body        []byte
	startInfo   []byte
	msgInfo     []byte
	found       int
	foundRetry  int
	rest        int64
	retryFound  bool  // one retry flavour already contributed
	filterBound bool  // a tag scan stopped at maxScanPerQueue: more to scan
	readErr     error // first store read error
}

// run executes the POP on a reader goroutine.
func (j *popJob) run() {
	b := j.b
	b.polls.popRuns.Add(1)
	seen := b.polls.snapshot(j.keys)
	o := j.collect()
	if len(o.cks) == 0 && len(o.commits) == 0 {
		j.release(o)
		j.finishEmpty(o, seen)
		return
	}
	group := j.h.ConsumerGroup
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
				if err := tx.SetConsumerOffset(group, oc.topic, oc.queueID, oc.offset); err != nil {
					return err
				}
			}
			return nil
		},
		Done: func(err error) {
			j.release(o)
			if err != nil {
				b.Log.Error().Err(err).Str("group", group).Str("topic", j.h.Topic).Msg("pop: checkpoint write failed")
				j.replyCode(codec.SystemError, "pop checkpoint write failed: "+err.Error())
				return
			}
			if len(o.cks) > 0 {
				b.revive.noteDurable(o.popTime + j.h.InvisibleTime)
			}
			if o.found > 0 {
				j.replySuccess(o)
				return
			}
			j.finishEmpty(o, seen)
		},
	}
	if err := b.Writer.Submit(op); err != nil {
		j.release(o)
		j.replyCode(submitCode(err), "pop: "+err.Error())
	}
}

// collect reads every source queue in RocketMQ's order and builds the
// response body, the checkpoints and the offset advances.
func (j *popJob) collect() *popOutcome {
	b := j.b
	o := &popOutcome{popTime: b.nowMillis()}
	seq := b.popSeq[j.seqStripe].Add(1) - 1
	retryFirst := b.pop.retryFirstEvery > 0 && seq%b.pop.retryFirstEvery == 0
	retry := j.retrySources()
	if retryFirst {
		j.readRetry(o, retry)
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
	return o
}

// retrySources lists the queues of the existing pop retry topics of
// (group, topic): V2 first, then V1.
func (j *popJob) retrySources() []popSource {
	var out []popSource
	for _, s := range [...]struct {
		name string
		flag codec.RetryFlag
	}{
		{j.keys[1].topic, codec.RetryFlagV2},
		{j.keys[2].topic, codec.RetryFlagV1},
	} {
		m, ok := j.b.Topics.Get(s.name)
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
func (j *popJob) readRetry(o *popOutcome, sources []popSource) {
	for _, s := range sources {
		if o.retryFound {
			return
		}
		j.readQueue(o, s)
	}
}

// readQueue pops from one queue. REQUIRES: called by run's goroutine.
func (j *popJob) readQueue(o *popOutcome, s popSource) {
	b, st, group := j.b, j.b.Store, j.h.ConsumerGroup
	remaining := int(j.h.MaxMsgNums) - o.found
	k := queueLockKey{group, s.topic, s.queueID}
	if remaining <= 0 || len(o.body) >= b.pop.maxPopBytes || !b.locks.tryLock(k) {
		maxOff := st.MaxOffset(s.topic, s.queueID)
		if stored, ok := st.ConsumerOffset(group, s.topic, s.queueID); ok && maxOff > stored {
			o.rest += maxOff - stored
		}
		return
	}
	// The offset is read under the lock: the previous holder released it
	// only after its offset advance was durable and published.
	stored, hasStored := st.ConsumerOffset(group, s.topic, s.queueID)
	minOff, maxOff := st.MinOffset(s.topic, s.queueID), st.MaxOffset(s.topic, s.queueID)
	start := stored
	if !hasStored {
		start = j.initOffset(s, minOff, maxOff)
	}
	start = min(max(start, minOff), maxOff)
	next := start
	ckStart := int64(-1) // first offset returned from this queue: receipt field 0
	var offsets []int64
	scanned := 0
	for remaining > 0 && next < maxOff && scanned < b.pop.maxScanPerQueue && len(o.body) < b.pop.maxPopBytes {
		want := remaining
		if j.filter != nil {
			want = min(256, b.pop.maxScanPerQueue-scanned)
		}
		recs, nxt, err := st.ReadMessages(s.topic, s.queueID, next, want, b.pop.maxPopBytes-len(o.body))
		if err != nil {
			if o.readErr == nil {
				o.readErr = err
			}
			b.Log.Error().Err(err).Str("topic", s.topic).Int32("queueId", s.queueID).Msg("pop: read failed")
			break
		}
		if len(recs) == 0 {
			next = max(next, nxt)
			break
		}
		for _, rec := range recs {
			scanned++
			m, _, err := codec.UnsafeDecodeMessage(rec)
			if err != nil {
				next++
				b.Log.Error().Err(err).Str("topic", s.topic).Int32("queueId", s.queueID).Int64("queueOffset", next-1).
					Msg("pop: skipping undecodable stored record")
				continue
			}
			next = m.QueueOffset + 1
			if !j.filter.matchProps(m.Properties) {
				continue
			}
			if ckStart < 0 {
				ckStart = m.QueueOffset
			}
			if err := j.appendRecord(o, &m, s, ckStart); err != nil {
				b.Log.Error().Err(err).Str("topic", s.topic).Int64("queueOffset", m.QueueOffset).Msg("pop: cannot re-encode record")
				continue
			}
			offsets = append(offsets, m.QueueOffset)
			remaining--
			if remaining == 0 {
				break
			}
		}
	}
	if scanned >= b.pop.maxScanPerQueue && next < maxOff {
		o.filterBound = true
	}
	if len(offsets) > 0 || next != stored || !hasStored {
		o.held = append(o.held, k)
		o.commits = append(o.commits, offsetCommit{s.topic, s.queueID, next})
	} else {
		j.unlockQueue(k)
	}
	if maxOff > next {
		o.rest += maxOff - next
	}
	if len(offsets) > 0 {
		o.startInfo = codec.AppendStartOffsetInfo(o.startInfo, s.flag, s.queueID, ckStart)
		o.msgInfo = codec.AppendMsgOffsetInfo(o.msgInfo, s.flag, s.queueID, offsets)
		o.found += len(offsets)
		if s.flag != codec.RetryFlagNormal {
			o.retryFound = true
			o.foundRetry += len(offsets)
		}
	}
}

// initInMemoryWindowMillis stands in for the Java broker's
// initPopOffsetByCheckMsgInMem page-cache test: a queue whose first message
// (offset 0) is still stored and was stored less than this long ago counts
// as "in memory", and initMode MAX then starts at 0.
const initInMemoryWindowMillis = 10 * 60 * 1000

// initOffset is where a group without a committed offset starts
// (PopMessageProcessor.getInitOffset): retry topics and initMode MIN at the
// queue's min offset; initMode MAX at 0 when the queue is young (never
// trimmed, offset 0 stored within initInMemoryWindowMillis — RocketMQ's
// in-memory shortcut), else at the last message (max − 1). The choice is
// persisted by the POP's offset commit, so it is made once per group.
func (j *popJob) initOffset(s popSource, minOff, maxOff int64) int64 {
	if s.flag != codec.RetryFlagNormal || codec.IsRetryTopic(s.topic) || j.h.InitMode == codec.ConsumeInitModeMin {
		return minOff
	}
	if minOff == 0 && maxOff > 0 {
		if rec, err := j.b.Store.ReadMessage(s.topic, s.queueID, 0); err == nil {
			if ts, ok := popstore.StoreTimestamp(rec); ok && j.b.nowMillis()-ts < initInMemoryWindowMillis {
				return 0
			}
		}
	}
	return max(maxOff-1, minOff, 0)
}

// appendRecord adds one message to the response body with its POP_CK
// property, and its checkpoint. Retry messages are returned under the
// requested (original) topic, as the Java broker does by default. ckStart
// is receipt field 0 (and the startOffsetInfo value): the first offset this
// POP returns from the queue, so BATCH_ACK bits stay small and never point
// below a returned message.
func (j *popJob) appendRecord(o *popOutcome, m *codec.MessageExt, s popSource, ckStart int64) error {
	b := j.b
	ei := codec.ExtraInfo{
		CkQueueOffset: ckStart, PopTime: o.popTime, InvisibleTime: j.h.InvisibleTime,
		RetryFlag: s.flag, BrokerName: b.pop.brokerName, QueueID: s.queueID, QueueOffset: m.QueueOffset,
	}
	props, err := codec.SetProperty(m.Properties, codec.PropertyPopCK, ei.String())
	if err != nil {
		return err
	}
	out := *m
	out.Properties = props
	if s.flag != codec.RetryFlagNormal {
		out.Topic = j.h.Topic
	}
	body, err := codec.AppendMessage(o.body, &out)
	if err != nil {
		return err
	}
	o.body = body
	o.cks = append(o.cks, popstore.Checkpoint{
		Key: popstore.CheckpointKey{
			VisibleAtMillis: o.popTime + j.h.InvisibleTime, Group: j.h.ConsumerGroup,
			Topic: s.topic, QueueId: s.queueID, QueueOffset: m.QueueOffset,
		},
		PopTimeMillis: o.popTime, InvisibleTimeMillis: j.h.InvisibleTime,
		RetryFlag: uint8(s.flag), PhysicalOffset: m.PhysicalOffset,
	})
	return nil
}

// unlockQueue releases one queue lock and wakes the polls a contended lock
// may have turned away.
func (j *popJob) unlockQueue(k queueLockKey) {
	if j.b.locks.unlock(k) {
		// One waiter of the group is enough: if it finds more than it takes
		// it wakes the next (replySuccess), if it finds nothing it parks again.
		j.b.polls.wakeSome(k.topic, k.queueID, k.group, 1)
	}
}

func (j *popJob) release(o *popOutcome) {
	for _, k := range o.held {
		j.unlockQueue(k)
	}
	o.held = nil
}
