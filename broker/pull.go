package broker

// Pull: PULL_MESSAGE (11) and LITE_PULL_MESSAGE (361) of remoting (same
// request and answer), broker/.../processor/PullMessageProcessor.java with
// DefaultMessageStore.getMessage's offset rules. rocketmq-client-go's push
// consumer, the Java PULL path (%RETRY% queues, orderly listeners), the
// Java lite pull consumer and the proxy's heartbeat-syncer consumer use it.
//
// Request (PullRequest: codec.PullMessageRequestHeader): consumerGroup,
// topic, queueId, queueOffset, maxMsgNums, sysFlag (0x1 commit offset, 0x2
// suspend, 0x4 subscription in request), commitOffset,
// suspendTimeoutMillis, subscription, subVersion, expressionType,
// maxMsgBytes, bname.
//
// Behaviour:
//   - The group first, before any topic check (PullMessageProcessor): an
//     unknown group is created when --auto-create-subscription-group allows
//     (or CID_RMQ_SYS_), else refused; consumeEnable=false is refused; a
//     consumer registered BROADCASTING is refused when the group's
//     consumeBroadcastEnable is false (after the topic checks).
//   - Validated on the caller's goroutine; with sysFlag 0x1 and
//     commitOffset ≥ 0 the consume offset is committed through the writer
//     (background lane, not waited for: commitPullOffset).
//   - On a reader: read from queueOffset (at most 32 messages and 256 KiB
//     of records, MaxPullBytes; one larger message alone), filter by
//     tag or SQL92 selector (with sysFlag 0x4 the subscription in the
//     request, empty meaning everything; without it the one registered by
//     HEART_BEAT; subscription_filter.go). Offset rules: empty queue → 19 (offset
//     0) or 21; below min → 21 with nextBeginOffset = min; at max → 19;
//     above max → 21 with nextBeginOffset = max; everything filtered out →
//     20 with nextBeginOffset past the scanned range.
//   - Long polling: a 19 with the suspend bit parks the request for
//     suspendTimeoutMillis (capped at maxPollMillis, 60 s; clients send
//     15-20 s); new messages in the queue wake it; at the end it answers 19.
//
// Results (PullResult.Code, done's error nil): SUCCESS (0) with records;
// PULL_NOT_FOUND (19); PULL_RETRY_IMMEDIATELY (20); PULL_OFFSET_MOVED
// (21); all with suggestWhichBrokerId (0), nextBeginOffset, minOffset,
// maxOffset.
//
// Errors (*Error): TOPIC_NOT_EXIST (17); NO_PERMISSION (16) topic not
// readable, group consumeEnable=false ("subscription group no permission,
// <group>", PullResult.ForbiddenType ForbiddenTypeGroup) or broadcast
// consumption disabled; SUBSCRIPTION_GROUP_NOT_EXIST (26) unknown group
// with auto-creation off ("subscription group [<group>] does not exist, "
// + FAQ); INVALID_PARAMETER (29) queueId out of range; SYSTEM_ERROR (1) read failure;
// SUBSCRIPTION_GROUP_NOT_EXIST (26) consumerGroup not a legal group name
// (codec.ValidateGroup); SYSTEM_ERROR (1) for SQL92 with
// --enable-property-filter off; SUBSCRIPTION_PARSE_FAILED (23) unknown
// expression type or a selector that does not compile;
// SUBSCRIPTION_NOT_EXIST (24) without sysFlag 0x4 when no live consumer of
// the group registered a subscription of the topic (pullSubscription);
// SYSTEM_BUSY (2)
// reader queue full;
// POLLING_FULL (209) registry full.

import (
	"errors"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/broker/longpoll"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// ForbiddenTypeGroup is ForbiddenType.GROUP_FORBIDDEN, the forbiddenType
// response field of a PULL refused because the group's consumeEnable is
// false (remoting/.../protocol/ForbiddenType.java).
const ForbiddenTypeGroup int32 = 2

// messageModelBroadcasting is MessageModel.BROADCASTING as HEART_BEAT
// registers it.
const messageModelBroadcasting = "BROADCASTING"

// MaxPullBatch caps the messages of one PULL answer (the Java store's
// maxTransferCountOnMessageInMemory).
const MaxPullBatch = 32

// MaxPullBytes caps the stored-record bytes of one PULL answer, as the
// Java store's maxTransferBytesOnMessageInMemory (256 KiB): twelve 20 KiB
// messages, not 32, as a 5.5.1 broker answers rocketmq-client 4.9.8. A
// message larger than the cap still goes out alone.
const MaxPullBytes = 256 << 10

// PullRequest is one PULL: the fields of the remoting header
// (remoting/.../protocol/header/PullMessageRequestHeader.java), the
// connection it came on, and what to do when it parks.
type PullRequest struct {
	codec.PullMessageRequestHeader
	// ConnID is the adapter's connection (or stream) id: a parked PULL is
	// released without an answer when ConnClosed(ConnID) is called. 0: none.
	ConnID uint64
	// OnPark, when not nil, is called each time the request parks, before
	// it waits (remoting marks the request long-polling for its latency
	// metric). Reader goroutine; must not block.
	OnPark func()
}

// PullResult is the answer of a PULL: the store status as a RocketMQ
// response code (Code: codec.Success FOUND, codec.PullNotFound
// NO_NEW_MSG, codec.PullRetryImmediately NO_MATCHED_MSG,
// codec.PullOffsetMoved OFFSET_MOVED) with Remark the GetMessageStatus name
// a Java broker puts into the remark, the offsets of
// PullMessageResponseHeader.java (queue offsets; MaxOffset is one past the
// last message) and, for SUCCESS, Found stored message records in Body
// (codec's record layout). With an error only ForbiddenType may be set.
type PullResult struct {
	Code                 int32
	Remark               string
	SuggestWhichBrokerID int64 // always 0: the master
	NextBeginOffset      int64
	MinOffset            int64
	MaxOffset            int64
	Body                 []byte
	Found                int
	// ForbiddenType is the forbiddenType field of a NO_PERMISSION refusal
	// (ForbiddenTypeGroup), 0 when none.
	ForbiddenType int32
}

// Pull validates r and runs it on the reader pool; done gets the status
// and records, or an *Error with the codes listed above. done runs on the
// caller's goroutine for a refusal, else on a reader goroutine or (a
// parked PULL whose poll ends) a timer goroutine. Any goroutine; never
// blocks.
func (b *Broker) Pull(r PullRequest, done func(PullResult, error)) {
	h := &r.PullMessageRequestHeader
	refuse := func(e *Error) { done(PullResult{}, e) }
	if e := b.lacking(codec.PermRead, "pulling message"); e != nil {
		done(PullResult{ForbiddenType: ForbiddenTypeBroker}, e)
		return
	}
	if err := codec.ValidateGroup(h.ConsumerGroup); err != nil {
		refuse(IllegalGroupError(h.ConsumerGroup, err))
		return
	}
	group, ok := b.Groups.Find(h.ConsumerGroup)
	if !ok {
		refuse(&Error{Code: codec.SubscriptionGroupNotExist, Remark: GroupNotExistRemark(h.ConsumerGroup)})
		return
	}
	if !group.ConsumeEnable {
		done(PullResult{ForbiddenType: ForbiddenTypeGroup}, &Error{Code: codec.NoPermission, Remark: GroupNoPermissionRemark(h.ConsumerGroup)})
		return
	}
	meta, e := b.readableTopic(h.Topic, "pulling message")
	if e != nil {
		refuse(e)
		return
	}
	if h.QueueID < 0 || h.QueueID >= meta.ReadQueueNums {
		refuse(Errorf(codec.InvalidParameter, "queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d]", h.QueueID, h.Topic, meta.ReadQueueNums))
		return
	}
	if !group.ConsumeBroadcastEnable {
		if g, ok := b.Clients.Consumer(h.ConsumerGroup); ok && g.MessageModel == messageModelBroadcasting {
			refuse(&Error{Code: codec.NoPermission, Remark: "the consumer group[" + h.ConsumerGroup + "] can not consume by broadcast way"})
			return
		}
	}
	filter, e := b.pullFilter(h)
	if e != nil {
		refuse(e)
		return
	}
	if h.SysFlag&codec.PullSysFlagCommitOffset != 0 && h.CommitOffset >= 0 && !b.resets.pending(h.ConsumerGroup, h.Topic, h.QueueID) {
		b.commitPullOffset(h.ConsumerGroup, h.Topic, h.QueueID, h.CommitOffset)
	}
	j := &pullJob{b: b, r: r, done: done, filter: filter,
		deadlineMillis: longpoll.Deadline(b.Now(), h.SuspendTimeoutMillis),
		keys:           []longpoll.Key{{Topic: h.Topic, QueueID: h.QueueID}}}
	if !b.SubmitRead(j.run) {
		refuse(errBusy)
	}
}

// pullSubscription returns the expression a PULL filters with: the
// request's own with sysFlag 0x4 (empty: everything), else the one the
// group's HEART_BEAT registered for the topic. Without 0x4, a group with no
// live consumer or a topic its consumers do not subscribe is
// SUBSCRIPTION_NOT_EXIST (24), "the consumer's group info not exist" or
// "the consumer's subscription not exist", as PullMessageProcessor
// (push consumers pull without 0x4 unless postSubscriptionWhenPull is
// set, after their first HEART_BEAT). Memory only.
func (b *Broker) pullSubscription(h *codec.PullMessageRequestHeader) (expType, exp string, e *Error) {
	if h.SysFlag&codec.PullSysFlagSubscription != 0 {
		return h.ExpressionType, h.Subscription, nil
	}
	g, ok := b.Clients.Consumer(h.ConsumerGroup)
	if !ok {
		return "", "", &Error{Code: codec.SubscriptionNotExist, Remark: "the consumer's group info not exist"}
	}
	sub, ok := g.Subscriptions[h.Topic]
	if !ok {
		return "", "", &Error{Code: codec.SubscriptionNotExist, Remark: "the consumer's subscription not exist"}
	}
	return sub.ExpressionType, sub.SubString, nil
}

// pullFilter is the filter of pullSubscription's expression (nil: every
// message), or the refusal of either step. Memory only.
func (b *Broker) pullFilter(h *codec.PullMessageRequestHeader) (*longpoll.Filter, *Error) {
	expType, exp, e := b.pullSubscription(h)
	if e != nil {
		return nil, e
	}
	return b.ParseFilter(expType, exp)
}

// commitPullOffset stores a consumer's committed offset without waiting
// (the Java broker only updates memory and flushes every 5 s). A full lane
// drops it: the client commits again with its next pull. Any goroutine.
func (b *Broker) commitPullOffset(group, topic string, queueID int32, offset int64) {
	op := &batch.Op{Lane: batch.LaneBackground, Bytes: 32,
		Apply: func(tx *popstore.Txn) error { return tx.SetConsumerOffset(group, topic, queueID, offset) }}
	if err := b.Writer.Submit(op); err != nil && !errors.Is(err, batch.ErrBusy) {
		b.Log.Debug().Err(err).Str("group", group).Str("topic", topic).Msg("pull: offset commit not queued")
	}
}

// PullRemark names the store status behind a PULL result code, as the Java
// broker puts GetMessageStatus into the remark: FOUND, NO_MATCHED_MESSAGE
// (20), OFFSET_ILLEGAL (21), NO_MESSAGE_IN_QUEUE (19 and anything else).
func PullRemark(code int32) string {
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

// pullStoreError is the refusal of a PULL whose store read failed.
func pullStoreError(err error) *Error {
	return &Error{Code: codec.SystemError, Remark: "pull: store read failed: " + err.Error()}
}
