package broker

// Pop: POP_MESSAGE (200050) of remoting, ReceiveMessage of gRPC;
// broker/.../processor/PopMessageProcessor.java with
// the RocksDB KV path (pop/PopConsumerService.java).
//
// Request (PopRequest: codec.PopMessageRequestHeader): consumerGroup, topic (original
// topic), queueId (-1 = every queue), maxMsgNums (1..32), invisibleTime (ms),
// pollTime (ms, 0 = no long poll), bornTime (ms; absent, 0 or later than
// the broker clock = now: clock skew never lengthens a poll),
// initMode (0 MIN, 1 MAX), expType/exp (TAG or SQL92 filter,
// subscription_filter.go), order, attemptId, bname.
//
// Behaviour:
//   - On the caller's goroutine: validate against in-memory topic metadata,
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
//     MIN), read and filter (tag or SQL92 selector), build one checkpoint per returned
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
//     or SQL92 filter parked, only POPs whose filter matches a new message,
//     found by reading the new messages' tags or properties on a reader)
//     and by released contended
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
// exist, " + FAQ for an unknown group with auto-creation off, and for an
// illegal group name (IllegalGroupError);
// INVALID_PARAMETER (29) maxMsgNums outside 1..32,
// queueId out of range, negative invisibleTime;
// SUBSCRIPTION_PARSE_FAILED (23) unknown expression type or an SQL92
// selector that does not compile; SYSTEM_ERROR (1) for SQL92 with
// --enable-property-filter off (ParseFilter).
//
// Orderly POP (order=true; broker/orderly, broker/pop_order.go): only the
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
// blocked parks on the lease ends only (broker.OrderWakeKey), so appends do
// not wake it; an ACK or CHANGE that frees the queue, or the deadline
// passing, wakes it.

import (
	"github.com/popshim/popshim/broker/longpoll"
	"github.com/popshim/popshim/broker/meta"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// PopTimeoutSlackMillis (ms) is RocketMQ's isTimeoutTooMuch slack: a request
// whose poll would already have ended more than this long ago is answered
// POLLING_TIMEOUT at once.
const PopTimeoutSlackMillis = 500

// MaxPopBatch is the most messages one POP may ask for (maxMsgNums).
const MaxPopBatch = 32

// PopRequest is one POP: the fields of the remoting header (consumerGroup,
// topic, queueId -1 for any, maxMsgNums 1..MaxPopBatch, invisibleTime ms,
// pollTime ms, bornTime ms, initMode, expType/exp, order, attemptId;
// broker/.../header/PopMessageRequestHeader.java), the connection it came
// on, and what to do when it parks.
type PopRequest struct {
	codec.PopMessageRequestHeader
	// ConnID is the adapter's connection (or stream) id: a parked POP is
	// released without an answer when ConnClosed(ConnID) is called. 0: none.
	ConnID uint64
	// OnPark, when not nil, is called each time the request parks, before
	// it waits (remoting marks the request long-polling for its latency
	// metric). Reader goroutine; must not block.
	OnPark func()
	// Records asks for the messages as PopResult.Records (each stored
	// record copied as stored, its receipt beside it) instead of a remoting
	// reply body: the gRPC endpoint converts them without encoding POP_CK
	// into each record and decoding it again.
	Records bool
}

// PopResult is the answer of a POP. On success Body holds Found stored
// message records (codec's record layout, each carrying the POP_CK
// property, the receipt handle) and the header fields describe them
// exactly as PopMessageResponseHeader.java does: popTime (ms),
// invisibleTime (ms), reviveQid (0, or 999 for an orderly POP), restNum,
// startOffsetInfo, msgOffsetInfo, orderCountInfo. With an error the header
// fields still carry popTime (now), invisibleTime and reviveQid, as a Java
// broker writes them.
type PopResult struct {
	PopTime         int64
	InvisibleTime   int64
	ReviveQid       int32
	RestNum         int64
	StartOffsetInfo string
	MsgOffsetInfo   string
	OrderCountInfo  string
	Body            []byte
	Found           int
	// Records holds the Found messages when PopRequest.Records was set;
	// Body is then only their backing store (records as stored, no
	// POP_CK), not a remoting reply body.
	Records []PoppedRecord
}

// PoppedRecord is one message of a POP asked with PopRequest.Records.
// Msg is the stored record decoded in place (codec.UnsafeDecodeMessage:
// its strings and Body alias PopResult.Body, which must stay unmodified),
// with the topic the consumer asked for (a retry record's is the original
// topic, as in the remoting reply) and, for an orderly POP, the lease's
// delivery count as reconsumeTimes. ExtraInfo is the receipt handle the
// remoting reply carries as POP_CK (CommitLogOffset not set; the record's
// PhysicalOffset is).
type PoppedRecord struct {
	Msg       codec.MessageExt
	ExtraInfo codec.ExtraInfo
}

// Pop validates r and runs it on the reader pool; done gets the messages,
// or an *Error with the codes listed above (POLLING_TIMEOUT when the poll
// ends empty). Any goroutine; never blocks.
func (b *Broker) Pop(r PopRequest, done func(PopResult, error)) {
	h := &r.PopMessageRequestHeader
	now := b.Now()
	born := longpoll.StartMillis(now, h.BornTime)
	refuse := func(e *Error) {
		done(PopResult{PopTime: now, InvisibleTime: h.InvisibleTime}, e)
	}
	switch {
	case now-born-h.PollTime > PopTimeoutSlackMillis:
		refuse(Errorf(codec.PollingTimeout, "the broker[%s] pop message is timeout too much", b.Settings.BrokerName))
		return
	case h.MaxMsgNums > MaxPopBatch || h.MaxMsgNums < 1:
		refuse(Errorf(codec.InvalidParameter, "the broker[%s] pop message's num %d is not in [1, %d]", b.Settings.BrokerName, h.MaxMsgNums, MaxPopBatch))
		return
	}
	if e := CheckInvisibleTime(h.InvisibleTime); e != nil {
		refuse(e)
		return
	}
	if e := b.lacking(codec.PermRead, "pop message"); e != nil {
		refuse(e)
		return
	}
	meta, e := b.readableTopic(h.Topic, "pop message")
	if e != nil {
		refuse(e)
		return
	}
	if h.QueueID >= meta.ReadQueueNums || h.QueueID < longpoll.AnyQueue {
		refuse(Errorf(codec.InvalidParameter, "queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d]", h.QueueID, h.Topic, meta.ReadQueueNums))
		return
	}
	if e := b.CheckConsumeGroup(h.ConsumerGroup); e != nil {
		refuse(e)
		return
	}
	filter, e := b.ParseFilter(h.ExpType, h.Exp)
	if e != nil {
		refuse(e)
		return
	}
	b.EnsurePopRetryTopic(h.ConsumerGroup)
	job := newPopJob(b.Svc, r, done, meta, filter, longpoll.Deadline(born, h.PollTime))
	// The request reserves its tags from arrival, also while it waits for a
	// reader, so a peer's scan in that time does not skip its messages.
	job.StartTaking()
	if !b.Svc.SubmitRead(job.Run) {
		job.EndTaking()
		refuse(errBusy)
	}
}

// readableTopic is the topic a consuming request reads: TOPIC_NOT_EXIST
// (17) "topic[<t>] not exist, apply first please!" when unknown,
// NO_PERMISSION (16) "the topic[<t>] <what> is forbidden" when its perm
// lacks read (what: "pop message", "pulling message", "peeking message", as
// the Java processors word it). Memory only.
func (b *Broker) readableTopic(topic, what string) (popstore.TopicMeta, *Error) {
	meta, ok := b.Topics.Get(topic)
	if !ok {
		return meta, Errorf(codec.TopicNotExist, "topic[%s] not exist, apply first please!", topic)
	}
	if meta.Perm&codec.PermRead == 0 {
		return meta, Errorf(codec.NoPermission, "the topic[%s] %s is forbidden", topic, what)
	}
	return meta, nil
}

// CheckConsumeGroup refuses a consumerGroup a POP may not use, in
// PopMessageProcessor's order: an illegal name → IllegalGroupError (26);
// an unknown group that may not be auto-created →
// SUBSCRIPTION_GROUP_NOT_EXIST (26) with Java's remark and FAQ; a group
// with consumeEnable=false → NO_PERMISSION (16). An unknown
// group is created with SubscriptionGroupConfig's defaults when
// --auto-create-subscription-group is on or its name starts with
// CID_RMQ_SYS_ (the write is queued, not waited for). Any goroutine;
// memory only.
func (b *Broker) CheckConsumeGroup(group string) *Error {
	if err := codec.ValidateGroup(group); err != nil {
		return IllegalGroupError(group, err)
	}
	g, ok := b.Groups.Find(group)
	if !ok {
		return &Error{Code: codec.SubscriptionGroupNotExist, Remark: GroupNotExistRemark(group)}
	}
	if !g.ConsumeEnable {
		return &Error{Code: codec.NoPermission, Remark: GroupNoPermissionRemark(group)}
	}
	return nil
}

// EnsurePopRetryTopic makes %RETRY%<group> exist when a group pops, so its
// route answers (mqadmin consumerProgress and the Java push consumer look
// it up). A Java broker creates it on HEART_BEAT, which popshim does too,
// but a proxy in cluster mode does not forward its clients' heartbeats, so
// POP is the first request popshim sees of such a group. A map read when
// the topic exists; otherwise fire and forget on the writer's background
// lane, a failure only logged (the next POP retries). Any goroutine.
func (b *Broker) EnsurePopRetryTopic(group string) {
	rt := codec.RetryGroupTopic(group)
	if _, ok := b.Topics.Get(rt); ok {
		return
	}
	if _, err := b.Topics.EnsureRetryTopic(group, b.RetryQueueNums(group)); err != nil {
		b.Log.Debug().Err(err).Str("consumerGroup", group).Msg("pop: retry topic not created")
	}
}

// RetryQueueNums is the queue count %RETRY%<group> is created with: the
// group's retryQueueNums (SubscriptionGroupConfig.java), or
// meta.RetryQueueNums for a group not (yet) in the table. Any goroutine.
func (b *Broker) RetryQueueNums(group string) int32 {
	if g, ok := b.Groups.Get(group); ok {
		return g.RetryQueueNums
	}
	return meta.RetryQueueNums
}

// FAQSuffix is what RocketMQ's FAQUrl.suggestTodo appends to a few
// remarks (common/.../help/FAQUrl.java).
const FAQSuffix = "\nSee https://rocketmq.apache.org/docs/faq/ for further details."

// GroupNotExistRemark is the remark of SUBSCRIPTION_GROUP_NOT_EXIST (26)
// that POP, PULL, PEEK, NOTIFICATION and POLLING_INFO give for a group that
// does not exist and may not be auto-created
// (PopMessageProcessor/PullMessageProcessor).
func GroupNotExistRemark(group string) string {
	return "subscription group [" + group + "] does not exist, " + FAQSuffix
}

// IllegalGroupError is the refusal of a POP or PULL whose consumerGroup
// is not a legal name (err from codec.ValidateGroup):
// SUBSCRIPTION_GROUP_NOT_EXIST (26), as a Java broker answers, whose
// SubscriptionGroupManager.findSubscriptionGroupConfig returns null for a
// name TopicValidator.validateGroup refuses, with a remark naming the field
// and why (Java's says only that the group does not exist). Checked before
// the group reaches the store or a metrics label (Prometheus panics on a
// label that is not UTF-8).
func IllegalGroupError(group string, err error) *Error {
	return Errorf(codec.SubscriptionGroupNotExist, "subscription group [%s] does not exist: illegal consumerGroup: %v", group, err)
}

// GroupNoPermissionRemark is the remark of NO_PERMISSION (16) for a group
// whose consumeEnable is false.
func GroupNoPermissionRemark(group string) string {
	return "subscription group no permission, " + group
}
