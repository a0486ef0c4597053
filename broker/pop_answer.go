package broker

import (
	"github.com/popshim/popshim/broker/longpoll"
	"github.com/popshim/popshim/codec"
)

// finishEmpty answers or parks a run that returned no message, then hands
// over what its scan left to parked peers (unless it runs again).
func (j *PopJob) finishEmpty(o *popOutcome, seen []uint64) {
	if j.answerOrPark(o, seen) {
		j.handoff(o)
	}
}

// answerOrPark answers or parks an empty run; false when the request runs
// again instead.
func (j *PopJob) answerOrPark(o *popOutcome, seen []uint64) bool {
	s := j.s
	if o.readErr != nil {
		j.fail(&Error{Code: codec.SystemError, Remark: "pop: store read failed: " + o.readErr.Error()})
		return true
	}
	if o.filterBound {
		// Messages remain that the tag scan did not reach: go on now
		// instead of parking (RocketMQ #8472, docs/SCENARIOS.md POLL-01).
		j.rerun()
		return false
	}
	if j.h.PollTime <= 0 {
		j.fail(errPollingTimeout)
		return true
	}
	if j.h.OnPark != nil {
		j.h.OnPark()
	}
	keys := j.keys
	if j.h.Order {
		keys, seen = j.orderParkKeys(o, seen)
	}
	p := &longpoll.Poll{
		Keys: keys, Group: j.h.ConsumerGroup, Filter: j.filter, Src: j.s, Seeds: o.seen,
		DeadlineMillis: j.deadlineMillis, ConnID: j.h.ConnID,
		OnWake:   j.rerun,
		OnExpire: func() { j.fail(errPollingTimeout) },
		OnDrop:   j.EndTaking, // the client is gone: it takes nothing any more
	}
	switch s.Polls.Park(p, seen) {
	case longpoll.Parked:
	case longpoll.ParkFull:
		j.fail(Errorf(codec.PollingFull, "the broker[%s] pop polling table is full", s.Settings.BrokerName))
	case longpoll.ParkChanged:
		j.rerun()
		return false
	case longpoll.ParkExpired:
		j.fail(errPollingTimeout)
	}
	return true
}

// rerun queues the request again on the reader pool.
func (j *PopJob) rerun() {
	if !j.s.ResubmitRead(j.Run) {
		j.fail(errBusy)
	}
}

// errPollingTimeout ends a POP whose poll ended empty.
var errPollingTimeout = &Error{Code: codec.PollingTimeout, Remark: "POLLING_TIMEOUT"}

// fail answers with a non-success code: done gets the header fields a
// Java broker still writes (popTime now, the request's invisibleTime, for
// an orderly POP reviveQid 999) and err.
func (j *PopJob) fail(err *Error) {
	j.EndTaking()
	r := PopResult{PopTime: j.s.nowMillis(), InvisibleTime: j.h.InvisibleTime}
	if j.h.Order {
		r.ReviveQid = codec.PopOrderReviveQueue
	}
	j.done(r, err)
}

// replySuccess answers with the messages of o.
func (j *PopJob) replySuccess(o *popOutcome) {
	j.EndTaking()
	s := j.s
	r := PopResult{
		PopTime: o.popTime, InvisibleTime: j.h.InvisibleTime, RestNum: o.rest,
		StartOffsetInfo: string(o.startInfo), MsgOffsetInfo: string(o.msgInfo),
		Body: o.body, Found: o.found,
	}
	if j.h.Order {
		r.ReviveQid, r.OrderCountInfo = codec.PopOrderReviveQueue, string(o.orderInfo)
	}
	if j.h.Records {
		r.Records = j.poppedRecords(o)
	}
	// The counters move before the reply goes, so a client that has the
	// reply sees them in GET_BROKER_RUNTIME_INFO (a test read 0 once when
	// the reply overtook them).
	sys := IsSystemTopic(j.h.Topic)
	if o.found > 0 {
		s.Metrics.GetNums.Add(uint64(o.found))
	}
	if n := o.found - o.foundRetry; n > 0 {
		s.Metrics.MessagesOut.WithLabelValues(j.h.Topic, j.h.ConsumerGroup, sys, "false").Add(float64(n))
	}
	if o.foundRetry > 0 {
		s.Metrics.MessagesOut.WithLabelValues(j.h.Topic, j.h.ConsumerGroup, sys, "true").Add(float64(o.foundRetry))
	}
	s.Metrics.ThroughputOut.WithLabelValues(j.h.Topic, j.h.ConsumerGroup, sys, BoolLabel(o.foundRetry > 0)).Add(float64(len(o.body)))
	j.done(r, nil)
	j.handoff(o)
	if o.rest > 0 {
		// More is waiting: let as many other parked consumers of the group
		// take it as their batches need.
		per := int64(max(j.h.MaxMsgNums, 1))
		s.Polls.WakeSome(j.h.Topic, longpoll.AnyQueue, j.h.ConsumerGroup, int(min((o.rest+per-1)/per, 1<<20)))
	}
}
