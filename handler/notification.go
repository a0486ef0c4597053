package handler

// NOTIFICATION (200054), broker/.../processor/NotificationProcessor.java.
//
// Header (codec.NotificationRequestHeader): consumerGroup, topic, queueId
// (-1 = any queue), pollTime (ms), bornTime (ms; 0 or later than the
// broker clock = now, longpoll.StartMillis), order,
// attemptId, bname.
//
// Behaviour: answers whether a POP by this group would find something:
// hasMsg is true when a queue of the topic (or the given queue), or a queue
// of the group's pop retry topics, holds messages beyond the group's
// consume offset (no offset yet: any stored message). Every input is
// in-memory, so the check runs on the event loop and, when woken, on the
// waking goroutine. With nothing to report it long-polls like POP (woken by
// appends to the topic and its retry topics; pollTime capped at
// maxPollMillis, 60 s). With order=true the retry topics do not count, and a
// queue blocked for the request by an orderly lease (broker.OrderBlocked:
// un-acked, invisible, another attemptId) counts as empty although it holds
// messages (docs/SCENARIOS.md POLL-04); a request that finds only blocked
// queues waits on the lease ends (broker.OrderWakeKey), not on appends.
//
// Response codes: SUCCESS (0) with hasMsg and pollingFull (a full polling
// table is SUCCESS, hasMsg=false, pollingFull=true; an expired poll is
// SUCCESS, hasMsg=false); POLLING_TIMEOUT (210) when now − bornTime −
// pollTime > 500 ms; TOPIC_NOT_EXIST (17); NO_PERMISSION (16) topic not
// readable or group consumeEnable=false; SUBSCRIPTION_GROUP_NOT_EXIST (26)
// for an unknown group that may not be auto-created (the group is checked
// after the topic, as NotificationProcessor; with
// --auto-create-subscription-group it is created);
// INVALID_PARAMETER (29) queueId out of range; SYSTEM_ERROR (1) header
// errors.

import (
	"fmt"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/longpoll"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleNotification(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeNotificationRequestHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	now := b.Now()
	born := longpoll.StartMillis(now, h.BornTime)
	if now-born-h.PollTime > broker.PopTimeoutSlackMillis {
		reply.Code(c, req, codec.PollingTimeout, fmt.Sprintf("the broker[%s] pop message is timeout too much", b.Settings.BrokerName))
		return
	}
	meta, ok := b.Topics.Get(h.Topic)
	if !ok {
		reply.Code(c, req, codec.TopicNotExist, fmt.Sprintf("topic[%s] not exist, apply first please!", h.Topic))
		return
	}
	if meta.Perm&codec.PermRead == 0 {
		reply.Code(c, req, codec.NoPermission, fmt.Sprintf("the topic[%s] peeking message is forbidden", h.Topic))
		return
	}
	if h.QueueID >= meta.ReadQueueNums || h.QueueID < longpoll.AnyQueue {
		reply.Code(c, req, codec.InvalidParameter, fmt.Sprintf("queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d]", h.QueueID, h.Topic, meta.ReadQueueNums))
		return
	}
	if g, ok := b.Groups.Find(h.ConsumerGroup); !ok {
		reply.Code(c, req, codec.SubscriptionGroupNotExist, reply.GroupNotExistRemark(h.ConsumerGroup))
		return
	} else if !g.ConsumeEnable {
		reply.Code(c, req, codec.NoPermission, reply.GroupNoPermissionRemark(h.ConsumerGroup))
		return
	}
	n := &notifyJob{b: b, c: c, req: req, h: h, meta: meta, deadlineMillis: longpoll.Deadline(born, h.PollTime),
		keys: []longpoll.Key{
			{Topic: h.Topic, QueueID: h.QueueID},
			{Topic: codec.PopRetryTopicV2(h.ConsumerGroup, h.Topic), QueueID: longpoll.AnyQueue},
			{Topic: codec.PopRetryTopicV1(h.ConsumerGroup, h.Topic), QueueID: longpoll.AnyQueue},
		}}
	if h.Order {
		// An orderly POP reads no retry topic; it waits on lease ends.
		n.keys = append(n.keys[:1], broker.OrderWakeKey(h.Topic))
	}
	n.run()
}

// notifyJob is one NOTIFICATION request.
type notifyJob struct {
	b              *Broker
	c              remoting.Conn
	req            *codec.Command
	h              codec.NotificationRequestHeader
	meta           popstore.TopicMeta
	deadlineMillis int64
	keys           []longpoll.Key
	// blockedOnly: the last hasMsg found every queue blocked for this
	// orderly request (set by hasMsg, read by run on the same goroutine).
	blockedOnly bool
}

func (n *notifyJob) run() {
	b := n.b
	for {
		seen := b.Polls.Snapshot(n.keys)
		if n.hasMsg() {
			n.reply(true, false)
			return
		}
		if n.h.PollTime <= 0 {
			n.reply(false, false)
			return
		}
		remoting.MarkLongPolling(n.c)
		keys := n.keys
		if n.h.Order && n.blockedOnly {
			// Only a lease end can give it something (docs/SCENARIOS.md POLL-03).
			keys, seen = keys[1:], seen[1:]
		}
		p := &longpoll.Poll{Keys: keys, DeadlineMillis: n.deadlineMillis, ConnID: n.c.ID(),
			OnWake: n.run, OnExpire: func() { n.reply(false, false) }}
		switch b.Polls.Park(p, seen) {
		case longpoll.Parked:
		case longpoll.ParkChanged:
			continue // an awaited topic moved meanwhile: look again
		case longpoll.ParkFull:
			n.reply(false, true)
		case longpoll.ParkExpired:
			n.reply(false, false)
		}
		return
	}
}

// hasMsg reports whether the group has something to pop. In-memory reads.
func (n *notifyJob) hasMsg() bool {
	b, group := n.b, n.h.ConsumerGroup
	n.blockedOnly = false
	blocked, open := 0, 0
	pending := func(topic string, q int32) bool {
		maxOff := b.Store.MaxOffset(topic, q)
		off, ok := b.Store.ConsumerOffset(group, topic, q)
		if !ok {
			off = b.Store.MinOffset(topic, q)
		}
		if n.h.Order && b.Svc.OrderBlocked(group, topic, q, n.h.AttemptID) {
			blocked++
			return false
		}
		open++
		return maxOff > off
	}
	defer func() { n.blockedOnly = blocked > 0 && open == 0 }()
	if n.h.QueueID >= 0 {
		if pending(n.h.Topic, n.h.QueueID) {
			return true
		}
	} else {
		for q := range n.meta.ReadQueueNums {
			if pending(n.h.Topic, q) {
				return true
			}
		}
	}
	if n.h.Order {
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

func (n *notifyJob) reply(hasMsg, full bool) {
	resp := codec.NewResponse(n.req, codec.Success, "")
	codec.NotificationResponseHeader{HasMsg: hasMsg, PollingFull: full}.Encode(resp)
	reply.Respond(n.c, n.req, resp)
}
