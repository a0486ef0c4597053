package handler

// POP_MESSAGE (200050), broker/.../processor/PopMessageProcessor.java with
// the RocksDB KV path (pop/PopConsumerService.java).
//
// Header (codec.PopMessageRequestHeader): consumerGroup, topic (original
// topic), queueId (-1 = every queue), maxMsgNums (1..32), invisibleTime (ms),
// pollTime (ms, 0 = no long poll), bornTime (ms; absent, 0 or later than
// the broker clock = now: clock skew never lengthens a poll),
// initMode (0 MIN, 1 MAX), expType/exp (TAG filter), order, attemptId, bname.
//
// Behaviour:
//   - On the event loop: decode, validate against in-memory topic metadata,
//     then the consumer group (after the topic and queue checks, as
//     PopMessageProcessor): an unknown group is created with
//     SubscriptionGroupConfig's defaults when --auto-create-subscription-group
//     is on or its name starts with CID_RMQ_SYS_ (the write is queued, not
//     waited for), else refused; a group with consumeEnable=false is
//     refused. Then queue the request on the reader pool (full: SYSTEM_BUSY
//     at once).
//   - On a reader: per source queue take the (group, topic, queueId)
//     try-lock (skip the queue when taken), start from the committed consume
//     offset (first use: MIN, or MAX-1 for initMode MAX; retry topics always
//     MIN), read and filter by tag, build one checkpoint per returned
//     message (popTime = broker clock at the start of the read).
//   - Every 5th request per (group, topic) reads the pop retry topics
//     (%RETRY%group+topic, then %RETRY%group_topic) before the normal
//     queues; otherwise after them, with whatever room is left. At most one
//     retry flavour contributes to one response.
//   - Checkpoints and the consume-offset advance of every queue read go to
//     the writer as ONE op (foreground lane); locks are held until it is
//     durable, then released. Fully filtered ranges advance the offset too.
//     An advance applies only if the stored offset is still the one the
//     POP read (compared on the writer): a reset (UPDATE_CONSUMER_OFFSET)
//     accepted in between wins; the POP still answers what it read.
//   - SUCCESS is sent only when that op is durable; each record carries the
//     POP_CK property (the receipt handle), retry messages are returned
//     under the original topic; the header's popTime, invisibleTime,
//     reviveQid (0), restNum, startOffsetInfo and msgOffsetInfo match the
//     body exactly.
//   - Nothing found: park until pollTime ends (bounded registry; pollTime
//     is capped at maxPollMillis, 60 s, clients send 15-20 s), woken by
//     appends to the topic or its retry topics (as many POPs of the group
//     as messages arrived, earliest deadline first; in a group with a TAG
//     filter parked, only POPs whose filter matches a new message, found by
//     reading the new messages' tags on a reader) and by released contended
//     locks (one POP of the group); a woken POP that finds nothing parks
//     again with its original deadline. A scan stopped by the filter bound
//     re-runs at once.
//   - A filtered POP skips (consumes) messages its filter rejects, except
//     one another POP request of its group would take while that request
//     is outstanding (from its arrival until answered, parked or not; see
//     takerTable): it stops there and wakes that POP. Messages for a
//     subscription with no POP outstanding are still skipped, as in
//     RocketMQ, which requires one subscription per group.
//   - The group's retry topic %RETRY%<group> is created when missing
//     (ensurePopRetryTopic), so its route exists for admin tools even when
//     the group's heartbeats never reach popshim (a proxy in cluster mode).
//
// Response codes: SUCCESS (0) with messages; POLLING_TIMEOUT (210) when the
// poll ends empty, pollTime ≤ 0, or now − bornTime − pollTime > 500 ms;
// POLLING_FULL (209); SYSTEM_BUSY (2) reader queue or writer lane full;
// SYSTEM_ERROR (1) header errors, store or write failures;
// TOPIC_NOT_EXIST (17); NO_PERMISSION (16) topic not readable, or
// "subscription group no permission, <group>" for consumeEnable=false;
// SUBSCRIPTION_GROUP_NOT_EXIST (26) "subscription group [<group>] does not
// exist, " + FAQ for an unknown group with auto-creation off;
// INVALID_PARAMETER (29) maxMsgNums outside 1..32,
// queueId out of range, negative invisibleTime, invalid group name;
// SUBSCRIPTION_PARSE_FAILED (23) unknown expression type;
// REQUEST_CODE_NOT_SUPPORTED (3) for SQL92 filters, which popshim does not
// serve.
//
// Orderly POP (order=true; broker/orderly, popsvc/order.go): only the
// topic's queues are read (no retry topics). A queue whose lease (the last
// orderly POP of the group there) holds an un-acked message whose deadline
// has not passed is blocked and skipped, unless the request carries that
// lease's attemptId (a re-entrant retry: the same messages again, the
// attempt not counted). A readable queue is read from the consume offset,
// which stays at the first returned message until orderly ACKs move it;
// the new lease (offsets, popTime, invisibleTime, attempt counts) is
// written in the same op as the offset, before the reply, so a crash never
// unblocks a queue early, skips or reorders. The reply has reviveQid 999
// and orderCountInfo (per offset "0 qo<q>%<offset> <count>" for offsets
// delivered before, then "0 <q> <min count>"), from which clients set
// reconsumeTimes. A queue lock held by another request is waited for
// (retried every 0.5 ms), not skipped. A request that finds every queue
// blocked parks on the lease ends only (popsvc.OrderWakeKey), so appends do
// not wake it; an ACK or CHANGE that frees the queue, or the deadline
// passing, wakes it.

import (
	"fmt"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/broker/longpoll"
	"github.com/popshim/popshim/broker/popsvc"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

// popTimeoutSlackMillis is RocketMQ's isTimeoutTooMuch slack: a request
// whose poll would already have ended more than this long ago is answered
// POLLING_TIMEOUT at once.
const popTimeoutSlackMillis = 500

// maxPopBatch is the most messages one POP may ask for.
const maxPopBatch = 32

func (b *Broker) handlePopMessage(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodePopMessageRequestHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	now := b.Now()
	born := longpoll.StartMillis(now, h.BornTime)
	refuse := func(code int32, remark string) {
		resp := codec.NewResponse(req, code, remark)
		codec.PopMessageResponseHeader{PopTime: now, InvisibleTime: h.InvisibleTime}.Encode(resp)
		reply.Respond(c, req, resp)
	}
	switch {
	case now-born-h.PollTime > popTimeoutSlackMillis:
		refuse(codec.PollingTimeout, fmt.Sprintf("the broker[%s] pop message is timeout too much", b.Pop.BrokerName))
		return
	case h.MaxMsgNums > maxPopBatch || h.MaxMsgNums < 1:
		refuse(codec.InvalidParameter, fmt.Sprintf("the broker[%s] pop message's num %d is not in [1, %d]", b.Pop.BrokerName, h.MaxMsgNums, maxPopBatch))
		return
	case popsvc.CheckInvisibleTime(h.InvisibleTime) != nil:
		refuse(codec.InvalidParameter, popsvc.CheckInvisibleTime(h.InvisibleTime).Remark)
		return
	}
	meta, ok := b.Topics.Get(h.Topic)
	if !ok {
		refuse(codec.TopicNotExist, fmt.Sprintf("topic[%s] not exist, apply first please!", h.Topic))
		return
	}
	if meta.Perm&codec.PermRead == 0 {
		refuse(codec.NoPermission, fmt.Sprintf("the topic[%s] pop message is forbidden", h.Topic))
		return
	}
	if h.QueueID >= meta.ReadQueueNums || h.QueueID < longpoll.AnyQueue {
		refuse(codec.InvalidParameter, fmt.Sprintf("queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d]", h.QueueID, h.Topic, meta.ReadQueueNums))
		return
	}
	if err := codec.ValidateGroup(h.ConsumerGroup); err != nil {
		refuse(codec.InvalidParameter, err.Error())
		return
	}
	if g, ok := b.Groups.Find(h.ConsumerGroup); !ok {
		refuse(codec.SubscriptionGroupNotExist, reply.GroupNotExistRemark(h.ConsumerGroup))
		return
	} else if !g.ConsumeEnable {
		refuse(codec.NoPermission, reply.GroupNoPermissionRemark(h.ConsumerGroup))
		return
	}
	filter, err := longpoll.ParseTagFilter(h.ExpType, h.Exp)
	switch err {
	case nil:
	case longpoll.ErrSQL92:
		refuse(codec.RequestCodeNotSupported, err.Error())
		return
	default:
		refuse(codec.SubscriptionParseFailed, fmt.Sprintf("parse the consumer's subscription failed: %s %q", err, h.ExpType))
		return
	}
	b.ensurePopRetryTopic(h.ConsumerGroup)
	job := popsvc.NewPopJob(b.Svc, c, req, h, meta, filter, longpoll.Deadline(born, h.PollTime))
	// The request reserves its tags from arrival, also while it waits for a
	// reader, so a peer's scan in that time does not skip its messages.
	job.StartTaking()
	if !b.Svc.SubmitRead(job.Run) {
		job.EndTaking()
		refuse(codec.SystemBusy, reply.BusyRemark)
	}
}

// ensurePopRetryTopic makes %RETRY%<group> exist when a group pops, so its
// route answers (mqadmin consumerProgress and the Java push consumer look it
// up; pop-scenarios RET-06). A Java broker creates it on HEART_BEAT, which
// popshim does too, but a proxy in cluster mode does not forward its
// clients' heartbeats, so POP is the first request popshim sees of such a
// group. A map read when the topic exists; otherwise fire and forget on the
// writer's background lane, a failure only logged (the next POP retries).
// Event loop.
func (b *Broker) ensurePopRetryTopic(group string) {
	rt := codec.RetryGroupTopic(group)
	if _, ok := b.Topics.Get(rt); ok {
		return
	}
	if _, err := b.Topics.EnsureRetryTopic(group, b.retryQueueNums(group)); err != nil {
		b.Log.Debug().Err(err).Str("consumerGroup", group).Msg("pop: retry topic not created")
	}
}
