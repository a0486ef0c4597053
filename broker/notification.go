package broker

// Notification: NOTIFICATION (200054) of remoting,
// broker/.../processor/NotificationProcessor.java.
//
// Request (NotificationRequest: codec.NotificationRequestHeader):
// consumerGroup, topic, queueId (-1 = any queue), pollTime (ms), bornTime
// (ms; 0 or later than the broker clock = now, longpoll.StartMillis),
// order, attemptId, bname.
//
// Behaviour: answers whether a POP by this group would find something:
// hasMsg is true when a queue of the topic (or the given queue), or a queue
// of the group's pop retry topics, holds messages beyond the group's
// consume offset (no offset yet: any stored message). Every input is
// in-memory, so the check runs on the caller's goroutine and, when woken,
// on the waking goroutine. With nothing to report it long-polls like POP
// (woken by appends to the topic and its retry topics; pollTime capped at
// maxPollMillis, 60 s). With order=true the retry topics do not count, and
// a queue blocked for the request by an orderly lease (OrderBlocked:
// un-acked, invisible, another attemptId) counts as empty although it holds
// messages (docs/SCENARIOS.md POLL-04); a request that finds only blocked
// queues waits on the lease ends (OrderWakeKey), not on appends.
//
// Results: SUCCESS (0) with hasMsg and pollingFull (a full polling table
// is SUCCESS, hasMsg=false, pollingFull=true; an expired poll is SUCCESS,
// hasMsg=false). Errors (*Error): POLLING_TIMEOUT (210) when now −
// bornTime − pollTime > 500 ms; TOPIC_NOT_EXIST (17); NO_PERMISSION (16)
// topic not readable or group consumeEnable=false;
// SUBSCRIPTION_GROUP_NOT_EXIST (26) for an unknown group that may not be
// auto-created (the group is checked after the topic, as
// NotificationProcessor; with --auto-create-subscription-group it is
// created); INVALID_PARAMETER (29) queueId out of range.

import (
	"github.com/popshim/popshim/broker/longpoll"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// NotificationRequest is one NOTIFICATION: the fields of the remoting
// header (remoting/.../protocol/header/NotificationRequestHeader.java),
// the connection it came on, and what to do when it parks.
type NotificationRequest struct {
	codec.NotificationRequestHeader
	// ConnID is the adapter's connection (or stream) id: a parked request
	// is released without an answer when ConnClosed(ConnID) is called.
	// 0: none.
	ConnID uint64
	// OnPark, when not nil, is called each time the request is about to
	// park (remoting marks the request long-polling for its latency
	// metric). Caller's or waking goroutine; must not block.
	OnPark func()
}

// NotificationResult is the SUCCESS answer of a NOTIFICATION
// (NotificationResponseHeader.java): HasMsg, whether a POP of the group
// would find a message; PollingFull, the polling table was full so the
// request could not wait (HasMsg false).
type NotificationResult struct {
	HasMsg      bool
	PollingFull bool
}

// Notification validates r and answers whether the group has something
// to pop, long-polling when it has not; done gets the result or an *Error
// with the codes listed above. done runs on the caller's goroutine for a
// refusal or an immediate answer, else on the goroutine that woke or
// expired the poll (the writer's append listener, an ACK's completion, a
// timer). Any goroutine; never blocks (memory reads only).
func (b *Broker) Notification(r NotificationRequest, done func(NotificationResult, error)) {
	h := &r.NotificationRequestHeader
	refuse := func(e *Error) { done(NotificationResult{}, e) }
	now := b.Now()
	born := longpoll.StartMillis(now, h.BornTime)
	if now-born-h.PollTime > PopTimeoutSlackMillis {
		refuse(Errorf(codec.PollingTimeout, "the broker[%s] pop message is timeout too much", b.Settings.BrokerName))
		return
	}
	if e := b.lacking(codec.PermRead, "peeking message"); e != nil {
		refuse(e)
		return
	}
	meta, e := b.readableTopic(h.Topic, "peeking message")
	if e != nil {
		refuse(e)
		return
	}
	if h.QueueID >= meta.ReadQueueNums || h.QueueID < longpoll.AnyQueue {
		refuse(Errorf(codec.InvalidParameter, "queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d]", h.QueueID, h.Topic, meta.ReadQueueNums))
		return
	}
	if g, ok := b.Groups.Find(h.ConsumerGroup); !ok {
		refuse(&Error{Code: codec.SubscriptionGroupNotExist, Remark: GroupNotExistRemark(h.ConsumerGroup)})
		return
	} else if !g.ConsumeEnable {
		refuse(&Error{Code: codec.NoPermission, Remark: GroupNoPermissionRemark(h.ConsumerGroup)})
		return
	}
	n := &notifyJob{b: b, r: r, done: done, meta: meta, deadlineMillis: longpoll.Deadline(born, h.PollTime),
		keys: []longpoll.Key{
			{Topic: h.Topic, QueueID: h.QueueID},
			{Topic: codec.PopRetryTopicV2(h.ConsumerGroup, h.Topic), QueueID: longpoll.AnyQueue},
			{Topic: codec.PopRetryTopicV1(h.ConsumerGroup, h.Topic), QueueID: longpoll.AnyQueue},
		}}
	if h.Order {
		// An orderly POP reads no retry topic; it waits on lease ends.
		n.keys = append(n.keys[:1], OrderWakeKey(h.Topic))
	}
	n.run()
}

// notifyJob is one validated NOTIFICATION request.
type notifyJob struct {
	b              *Broker
	r              NotificationRequest
	done           func(NotificationResult, error) // called once: the answer
	meta           popstore.TopicMeta
	deadlineMillis int64
	keys           []longpoll.Key
	// blockedOnly: the last hasMsg found every queue blocked for this
	// orderly request (set by hasMsg, read by run on the same goroutine).
	blockedOnly bool
}

// run answers now or parks; a woken request runs again. Any goroutine.
func (n *notifyJob) run() {
	b, h := n.b, &n.r.NotificationRequestHeader
	for {
		seen := b.Polls.Snapshot(n.keys)
		if n.hasMsg() {
			n.answer(true, false)
			return
		}
		if h.PollTime <= 0 {
			n.answer(false, false)
			return
		}
		if n.r.OnPark != nil {
			n.r.OnPark()
		}
		keys := n.keys
		if h.Order && n.blockedOnly {
			// Only a lease end can give it something (docs/SCENARIOS.md POLL-03).
			keys, seen = keys[1:], seen[1:]
		}
		p := &longpoll.Poll{Keys: keys, DeadlineMillis: n.deadlineMillis, ConnID: n.r.ConnID,
			OnWake: n.run, OnExpire: func() { n.answer(false, false) }}
		switch b.Polls.Park(p, seen) {
		case longpoll.Parked:
		case longpoll.ParkChanged:
			continue // an awaited topic moved meanwhile: look again
		case longpoll.ParkFull:
			n.answer(false, true)
		case longpoll.ParkExpired:
			n.answer(false, false)
		}
		return
	}
}

// hasMsg reports whether the group has something to pop. In-memory reads.
func (n *notifyJob) hasMsg() bool {
	b, h := n.b, &n.r.NotificationRequestHeader
	group := h.ConsumerGroup
	n.blockedOnly = false
	blocked, open := 0, 0
	pending := func(topic string, q int32) bool {
		maxOff := b.Store.MaxOffset(topic, q)
		off, ok := b.Store.ConsumerOffset(group, topic, q)
		if !ok {
			off = b.Store.MinOffset(topic, q)
		}
		if h.Order && b.Svc.OrderBlocked(group, topic, q, h.AttemptID) {
			blocked++
			return false
		}
		open++
		return maxOff > off
	}
	defer func() { n.blockedOnly = blocked > 0 && open == 0 }()
	if h.QueueID >= 0 {
		if pending(h.Topic, h.QueueID) {
			return true
		}
	} else {
		for q := range n.meta.ReadQueueNums {
			if pending(h.Topic, q) {
				return true
			}
		}
	}
	if h.Order {
		return false // no retry topics for orderly POP
	}
	for _, k := range n.keys[1:] {
		if m, ok := b.Topics.Get(k.Topic); ok {
			for q := range m.ReadQueueNums {
				if pending(k.Topic, q) {
					return true
				}
			}
		}
	}
	return false
}

// answer completes the request with SUCCESS.
func (n *notifyJob) answer(hasMsg, full bool) {
	n.done(NotificationResult{HasMsg: hasMsg, PollingFull: full}, nil)
}
