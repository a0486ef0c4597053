package handler

// PULL_MESSAGE (11) and LITE_PULL_MESSAGE (361, same header and answer),
// broker/.../processor/PullMessageProcessor.java with
// DefaultMessageStore.getMessage's offset rules. rocketmq-client-go's push
// consumer, the Java PULL path (%RETRY% queues, orderly listeners), the
// Java lite pull consumer and the proxy's heartbeat-syncer consumer use it.
//
// Header (codec.PullMessageRequestHeader): consumerGroup, topic, queueId,
// queueOffset, maxMsgNums, sysFlag (0x1 commit offset, 0x2 suspend, 0x4
// subscription in request), commitOffset, suspendTimeoutMillis,
// subscription, subVersion, expressionType, maxMsgBytes, bname.
//
// Behaviour:
//   - The group first, before any topic check (PullMessageProcessor): an
//     unknown group is created when --auto-create-subscription-group allows
//     (or CID_RMQ_SYS_), else refused; consumeEnable=false is refused; a
//     consumer registered BROADCASTING is refused when the group's
//     consumeBroadcastEnable is false (after the topic checks).
//   - Validated on the event loop; with sysFlag 0x1 and commitOffset ≥ 0 the
//     consume offset is committed through the writer (background lane, not
//     waited for).
//   - On a reader: read from queueOffset (at most 32 messages), filter by
//     tag (the subscription in the request, else the one registered by
//     HEART_BEAT, else everything). Offset rules: empty queue → 19 (offset
//     0) or 21; below min → 21 with nextBeginOffset = min; at max → 19;
//     above max → 21 with nextBeginOffset = max; everything filtered out →
//     20 with nextBeginOffset past the scanned range.
//   - Long polling: a 19 with the suspend bit parks the request for
//     suspendTimeoutMillis (capped at maxPollMillis, 60 s; clients send
//     15-20 s); new messages in the queue wake it; at the end it answers 19.
//
// Response codes: SUCCESS (0) with records; PULL_NOT_FOUND (19);
// PULL_RETRY_IMMEDIATELY (20); PULL_OFFSET_MOVED (21); all with
// suggestWhichBrokerId (0), nextBeginOffset, minOffset, maxOffset.
// TOPIC_NOT_EXIST (17); NO_PERMISSION (16) topic not readable, group
// consumeEnable=false ("subscription group no permission, <group>",
// response field forbiddenType=2) or broadcast consumption disabled;
// SUBSCRIPTION_GROUP_NOT_EXIST (26) unknown group with auto-creation off
// ("subscription group [<group>] does not exist, " + FAQ);
// SYSTEM_ERROR (1) header errors, queueId out of range, read failure;
// SUBSCRIPTION_GROUP_NOT_EXIST (26) consumerGroup not a legal group name
// (codec.ValidateGroup); REQUEST_CODE_NOT_SUPPORTED (3) for SQL92; SUBSCRIPTION_PARSE_FAILED (23);
// SYSTEM_BUSY (2) reader queue full; POLLING_FULL (209) registry full.

import (
	"fmt"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/longpoll"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/remoting"
)

// forbiddenTypeGroup is ForbiddenType.GROUP_FORBIDDEN, the forbiddenType
// response field of a PULL refused because the group's consumeEnable is
// false (remoting/.../protocol/ForbiddenType.java).
const forbiddenTypeGroup = "2"

// messageModelBroadcasting is MessageModel.BROADCASTING as HEART_BEAT
// registers it.
const messageModelBroadcasting = "BROADCASTING"

// maxPullBatch caps the messages of one PULL answer (the Java store's
// maxTransferCountOnMessageInMemory).
const maxPullBatch = 32

func (b *Broker) handlePullMessage(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodePullMessageRequestHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	if err := codec.ValidateGroup(h.ConsumerGroup); err != nil {
		// A Java broker's findSubscriptionGroupConfig returns null for an
		// illegal group name. Checked before the group reaches the store
		// (offset commit) or a metrics label (Prometheus panics on a label
		// that is not UTF-8).
		reply.Code(c, req, codec.SubscriptionGroupNotExist, fmt.Sprintf("subscription group [%s] does not exist: %v", h.ConsumerGroup, err))
		return
	}
	group, ok := b.Groups.Find(h.ConsumerGroup)
	if !ok {
		reply.Code(c, req, codec.SubscriptionGroupNotExist, reply.GroupNotExistRemark(h.ConsumerGroup))
		return
	}
	if !group.ConsumeEnable {
		resp := codec.NewResponse(req, codec.NoPermission, reply.GroupNoPermissionRemark(h.ConsumerGroup))
		resp.SetExt("forbiddenType", forbiddenTypeGroup)
		reply.Respond(c, req, resp)
		return
	}
	meta, ok := b.Topics.Get(h.Topic)
	if !ok {
		reply.Code(c, req, codec.TopicNotExist, fmt.Sprintf("topic[%s] not exist, apply first please!", h.Topic))
		return
	}
	if meta.Perm&codec.PermRead == 0 {
		reply.Code(c, req, codec.NoPermission, fmt.Sprintf("the topic[%s] pulling message is forbidden", h.Topic))
		return
	}
	if h.QueueID < 0 || h.QueueID >= meta.ReadQueueNums {
		reply.Code(c, req, codec.SystemError, fmt.Sprintf("queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d]", h.QueueID, h.Topic, meta.ReadQueueNums))
		return
	}
	if !group.ConsumeBroadcastEnable {
		if g, ok := b.Clients.Consumer(h.ConsumerGroup); ok && g.MessageModel == messageModelBroadcasting {
			reply.Code(c, req, codec.NoPermission, "the consumer group["+h.ConsumerGroup+"] can not consume by broadcast way")
			return
		}
	}
	expType, exp := h.ExpressionType, h.Subscription
	if h.SysFlag&codec.PullSysFlagSubscription == 0 || exp == "" {
		expType, exp = "", ""
		if g, ok := b.Clients.Consumer(h.ConsumerGroup); ok {
			if s, ok := g.Subscriptions[h.Topic]; ok {
				expType, exp = s.ExpressionType, s.SubString
			}
		}
	}
	filter, err := longpoll.ParseTagFilter(expType, exp)
	switch err {
	case nil:
	case longpoll.ErrSQL92:
		reply.Code(c, req, codec.RequestCodeNotSupported, err.Error())
		return
	default:
		reply.Code(c, req, codec.SubscriptionParseFailed, "parse the consumer's subscription failed: "+err.Error())
		return
	}
	if h.SysFlag&codec.PullSysFlagCommitOffset != 0 && h.CommitOffset >= 0 {
		b.commitPullOffset(h.ConsumerGroup, h.Topic, h.QueueID, h.CommitOffset)
	}
	j := &pullJob{b: b, c: c, req: req, h: h, filter: filter,
		deadlineMillis: longpoll.Deadline(b.Now(), h.SuspendTimeoutMillis),
		keys:           []longpoll.Key{{Topic: h.Topic, QueueID: h.QueueID}}}
	if !b.SubmitRead(j.run) {
		reply.Code(c, req, codec.SystemBusy, reply.BusyRemark)
	}
}

// commitPullOffset stores a consumer's committed offset without waiting
// (the Java broker only updates memory and flushes every 5 s). A full lane
// drops it: the client commits again with its next pull.
func (b *Broker) commitPullOffset(group, topic string, queueID int32, offset int64) {
	op := &batch.Op{Lane: batch.LaneBackground, Bytes: 32,
		Apply: func(tx *popstore.Txn) error { return tx.SetConsumerOffset(group, topic, queueID, offset) }}
	if err := b.Writer.Submit(op); err != nil && !reply.IsBusy(err) {
		b.Log.Debug().Err(err).Str("group", group).Str("topic", topic).Msg("pull: offset commit not queued")
	}
}

// pullJob is one PULL request on the reader pool.
type pullJob struct {
	b              *Broker
	c              remoting.Conn
	req            *codec.Command
	h              codec.PullMessageRequestHeader
	filter         *longpoll.TagFilter
	deadlineMillis int64
	keys           []longpoll.Key
}

func (j *pullJob) run() {
	b, h := j.b, j.h
	seen := b.Polls.Snapshot(j.keys)
	st := b.Store
	minOff, maxOff := st.MinOffset(h.Topic, h.QueueID), st.MaxOffset(h.Topic, h.QueueID)
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
		limit := b.Settings.MaxPopBytes
		if h.MaxMsgBytes > 0 {
			limit = min(limit, int(h.MaxMsgBytes))
		}
		want := min(max(int(h.MaxMsgNums), 1), maxPullBatch)
		next = off
		full := false
		for scanned := 0; !full && found < want && next < maxOff && scanned < b.Settings.MaxScanPerQueue; {
			recs, nxt, err := st.ReadMessages(h.Topic, h.QueueID, next, want-found, limit-len(body))
			if err != nil {
				reply.Code(j.c, j.req, codec.SystemError, "pull: store read failed: "+err.Error())
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
	j.reply(code, next, minOff, maxOff, body, found)
}

// park suspends the pull; false when it must be answered now.
func (j *pullJob) park(seen []uint64) bool {
	b := j.b
	remoting.MarkLongPolling(j.c)
	p := &longpoll.Poll{Keys: j.keys, DeadlineMillis: j.deadlineMillis, ConnID: j.c.ID(),
		OnWake: func() {
			if !b.ResubmitRead(j.run) {
				reply.Code(j.c, j.req, codec.SystemBusy, reply.BusyRemark)
			}
		},
		OnExpire: func() {
			st := b.Store
			minOff, maxOff := st.MinOffset(j.h.Topic, j.h.QueueID), st.MaxOffset(j.h.Topic, j.h.QueueID)
			j.reply(codec.PullNotFound, j.h.QueueOffset, minOff, maxOff, nil, 0)
		},
	}
	switch b.Polls.Park(p, seen) {
	case longpoll.Parked:
		return true
	case longpoll.ParkChanged:
		p.OnWake()
		return true
	case longpoll.ParkFull:
		reply.Code(j.c, j.req, codec.PollingFull, "pull polling table is full")
		return true
	}
	return false
}

func (j *pullJob) reply(code int32, next, minOff, maxOff int64, body []byte, found int) {
	resp := codec.NewResponse(j.req, code, pullRemark(code))
	codec.PullMessageResponseHeader{NextBeginOffset: next, MinOffset: minOff, MaxOffset: maxOff}.Encode(resp)
	resp.Body = body
	reply.Respond(j.c, j.req, resp)
	if found > 0 {
		j.b.Metrics.GetNums.Add(uint64(found))
		sys := broker.IsSystemTopic(j.h.Topic)
		retry := broker.BoolLabel(codec.IsRetryTopic(j.h.Topic))
		j.b.Metrics.MessagesOut.WithLabelValues(j.h.Topic, j.h.ConsumerGroup, sys, retry).Add(float64(found))
		j.b.Metrics.ThroughputOut.WithLabelValues(j.h.Topic, j.h.ConsumerGroup, sys, retry).Add(float64(len(body)))
	}
}

// pullRemark names the store status behind a PULL code, as the Java broker
// puts GetMessageStatus into the remark.
func pullRemark(code int32) string {
	switch code {
	case codec.Success:
		return "FOUND"
	case codec.PullRetryImmediately:
		return "NO_MATCHED_MESSAGE"
	case codec.PullOffsetMoved:
		return "OFFSET_ILLEGAL"
	}
	return "NO_MESSAGE_IN_QUEUE"
}
