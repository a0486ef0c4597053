package broker

import (
	"github.com/popshim/popshim/broker/longpoll"
	"github.com/popshim/popshim/codec"
)

// pullJob is one validated PULL request on the reader pool; a woken PULL
// runs again as a copy with the filter registered then (rerun). Fields are
// immutable after Pull.
type pullJob struct {
	b              *Broker
	r              PullRequest
	done           func(PullResult, error) // called once: the answer
	filter         *longpoll.Filter        // nil: every message
	deadlineMillis int64                   // end of the long poll, broker clock
	keys           []longpoll.Key          // the pulled queue
}

// run reads the queue from the request's offset and answers, or parks an
// empty suspendable read. Reader goroutine.
func (j *pullJob) run() {
	b, h := j.b, &j.r.PullMessageRequestHeader
	if b.Polls.ConnGone(j.r.ConnID) {
		return // the client is gone: read nothing, answer nothing
	}
	seen := b.Polls.Snapshot(j.keys)
	st := b.Store
	minOff, maxOff := st.MinOffset(h.Topic, h.QueueID), st.MaxOffset(h.Topic, h.QueueID)
	if reset, ok := b.resets.take(h.ConsumerGroup, h.Topic, h.QueueID); ok {
		// The queue was reset since the consumer's last PULL: tell it where
		// to go on (PullMessageProcessor's OFFSET_RESET answer).
		j.answer(codec.PullOffsetMoved, reset, minOff, maxOff, nil, 0)
		return
	}
	off := h.QueueOffset
	var (
		code  int32
		next  int64
		body  []byte
		found int
	)
	switch {
	case maxOff == 0:
		code, next = codec.PullNotFound, 0
		if off != 0 {
			code = codec.PullOffsetMoved
		}
	case off < minOff:
		code, next = codec.PullOffsetMoved, minOff
	case off == maxOff:
		code, next = codec.PullNotFound, off
	case off > maxOff:
		code, next = codec.PullOffsetMoved, maxOff
	default:
		// The reply room the answer may take (reply_room.go), given back
		// once the answer is given (the listener counts it then).
		limit := b.Svc.reserveReply(min(b.Settings.MaxPopBytes, MaxPullBytes))
		defer b.Svc.releaseReply(int64(limit))
		if limit == 0 {
			// Clients hold the reply bound: read nothing until they read;
			// a suspended PULL looks again until its poll ends.
			if h.SysFlag&codec.PullSysFlagSuspend != 0 && h.SuspendTimeoutMillis > 0 &&
				b.Svc.retryForRoom(j.r.ConnID, j.deadlineMillis, j.rerun, nil) {
				return
			}
			code, next = codec.PullNotFound, off
			break
		}
		if h.MaxMsgBytes > 0 {
			limit = min(limit, int(h.MaxMsgBytes))
		}
		want := min(max(int(h.MaxMsgNums), 1), MaxPullBatch)
		next = off
		full := false
		for scanned := 0; !full && found < want && next < maxOff && scanned < b.Settings.MaxScanPerQueue; {
			recs, nxt, err := st.ReadMessages(h.Topic, h.QueueID, next, want-found, limit-len(body))
			if err != nil {
				j.done(PullResult{}, pullStoreError(err))
				return
			}
			if len(recs) == 0 {
				next = max(next, nxt)
				break
			}
			next = nxt
			for _, rec := range recs {
				scanned++
				m, _, err := codec.UnsafeDecodeMessage(rec)
				if err != nil || !j.filter.MatchProps(m.Properties) {
					continue
				}
				if len(body) > 0 && len(body)+len(rec) > limit {
					next, full = m.QueueOffset, true // left for the next PULL
					break
				}
				body = append(body, rec...)
				found++
			}
			if len(body) >= limit {
				break
			}
		}
		code = codec.Success
		if found == 0 {
			code = codec.PullRetryImmediately
		}
	}
	if code == codec.PullNotFound && h.SysFlag&codec.PullSysFlagSuspend != 0 && h.SuspendTimeoutMillis > 0 {
		if j.park(seen) {
			return
		}
	}
	j.answer(code, next, minOff, maxOff, body, found)
}

// rerun submits the pull to the reader pool again; SYSTEM_BUSY when the
// pool is full. Any goroutine (a wake-up runs it on the writer's): the
// work is done by rerunFresh on the reader.
func (j *pullJob) rerun() {
	if !j.b.ResubmitRead(j.rerunFresh) {
		j.done(PullResult{}, errBusy)
	}
}

// rerunFresh runs the pull again. A PULL that filters with the group's
// registered subscription (no sysFlag 0x4) takes the one registered now,
// as a Java broker runs a woken PULL through PullMessageProcessor again:
// a consumer that changed its selector while its PULLs were parked was
// otherwise served messages only the old selector matched (one per queue
// with rocketmq-client 5.5.0, found side by side with 5.5.1). If the group
// no longer subscribes the topic, the answer is that refusal. Reader
// goroutine.
func (j *pullJob) rerunFresh() {
	if j.r.SysFlag&codec.PullSysFlagSubscription != 0 {
		j.run()
		return
	}
	f, e := j.b.pullFilter(&j.r.PullMessageRequestHeader)
	if e != nil {
		j.done(PullResult{}, e)
		return
	}
	fresh := *j
	fresh.filter = f
	fresh.run()
}

// park suspends the pull; false when it must be answered now. Reader
// goroutine.
func (j *pullJob) park(seen []uint64) bool {
	b, h := j.b, &j.r.PullMessageRequestHeader
	if j.r.OnPark != nil {
		j.r.OnPark()
	}
	p := &longpoll.Poll{Keys: j.keys, DeadlineMillis: j.deadlineMillis, ConnID: j.r.ConnID,
		OnWake: j.rerun,
		OnExpire: func() {
			st := b.Store
			minOff, maxOff := st.MinOffset(h.Topic, h.QueueID), st.MaxOffset(h.Topic, h.QueueID)
			j.answer(codec.PullNotFound, h.QueueOffset, minOff, maxOff, nil, 0)
		},
	}
	switch b.Polls.Park(p, seen) {
	case longpoll.Parked:
		return true
	case longpoll.ParkChanged:
		p.OnWake()
		return true
	case longpoll.ParkFull:
		j.done(PullResult{}, &Error{Code: codec.PollingFull, Remark: "pull polling table is full"})
		return true
	}
	return false
}

// answer completes the request with a store status and counts the
// messages out.
func (j *pullJob) answer(code int32, next, minOff, maxOff int64, body []byte, found int) {
	h := &j.r.PullMessageRequestHeader
	if found > 0 { // counted before the reply goes, so a client that has it sees them
		m := j.b.Metrics
		m.GetNums.Add(uint64(found))
		sys := IsSystemTopic(h.Topic)
		retry := BoolLabel(codec.IsRetryTopic(h.Topic))
		m.MessagesOut.WithLabelValues(h.Topic, h.ConsumerGroup, sys, retry).Add(float64(found))
		m.ThroughputOut.WithLabelValues(h.Topic, h.ConsumerGroup, sys, retry).Add(float64(len(body)))
	}
	j.done(PullResult{Code: code, Remark: PullRemark(code), NextBeginOffset: next, MinOffset: minOff, MaxOffset: maxOff,
		Body: body, Found: found}, nil)
}
