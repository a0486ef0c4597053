package broker

// Send: SEND_MESSAGE (10), SEND_MESSAGE_V2 (310) and SEND_BATCH_MESSAGE
// (320) of remoting, SendMessage of gRPC;
// broker/.../processor/SendMessageProcessor.java (sendMessage,
// sendBatchMessage).
//
// Request (SendRequest): producerGroup, topic, queueId (negative: the broker
// picks one), sysFlag, bornTimestamp, flag, properties, reconsumeTimes,
// maxReconsumeTimes, the born host (the peer), the client version, and the
// body as the producer sent it (maybe compressed) — or, for a batch, the
// batch body (codec.AppendBatchEntry entries: flag, body and properties of
// each message).
//
// Behaviour of a single message:
//   - Validated on the caller's goroutine against in-memory state; an
//     unknown topic is auto-created when --auto-create-topic allows it
//     (TopicTable.GetOrCreate).
//   - The POP_CK property is stripped, UNIQ_KEY is added when missing,
//     CLUSTER is set. Body, flag and sysFlag (compression) are stored
//     unchanged; born host is the peer, store host this broker.
//   - A send to a %RETRY% topic whose reconsumeTimes exceeds the limit
//     (maxReconsumeTimes from clients of V3_4_9 on, else the group's
//     retryMaxTimes, else 16) goes to %DLQ%<group> queue 0 instead.
//   - One writer op on the produce lane appends the record (queueOffset and
//     physicalOffset assigned there); done gets the result when durable.
//   - Delayed delivery (broker/timer, Settings.Resolve): DELAY level 1..N
//     (--message-delay-level; above N: N), else TIMER_DELAY_SEC,
//     TIMER_DELAY_MS or TIMER_DELIVER_MS up to --timer-max-delay-sec
//     ahead. A delayed message is stored as a timer entry (same op,
//     REAL_TOPIC/REAL_QID and for timers TIMER_OUT_MS set) and appears in
//     its queue when due; the result carries the entry's offsetMsgId and
//     queueOffset 0. A time now or past stores at once. Not delayed: DLQ
//     diversions, messages already carrying TIMER_OUT_MS.
//   - A half message (transaction.IsHalf: TRAN_MSG=true, unless
//     reconsumeTimes > 0 and a DELAY level is set, as Java decides for
//     clients before 4.6.1) passes the same checks and gets the same
//     properties, then is stored as a half (broker/transaction.go,
//     send_half.go) instead of in its queue; no delay resolution (a DELAY
//     or timer property acts when it is committed). The result:
//     OffsetMsgID the half's offsetMsgId (END_TRANSACTION's
//     commitLogOffset), QueueID the real queue, QueueOffset the half's
//     sequence number (tranStateTableOffset), TransactionID its UNIQ_KEY.
//
// Behaviour of a batch (SendRequest.Batch):
//   - Validated like a single message; %RETRY% topics and topics longer
//     than 127 characters are refused (Java batch rules). The request's
//     properties are the batch's own and are not stored.
//   - Each entry becomes its own stored record with the batch's topic,
//     queueId, sysFlag, bornTimestamp, born host and reconsumeTimes and its
//     own flag, body and properties (POP_CK stripped; no UNIQ_KEY or
//     CLUSTER added, as in Java). All records go to the writer as one op
//     and get consecutive queue offsets.
//   - Not delayed: a batch whose own properties carry a DELAY level ≥ 1 is
//     refused with MESSAGE_ILLEGAL (CommitLog.asyncPutMessages); DELAY and
//     TIMER_* properties of the entries are stored as given and not acted
//     on, as in Java (the schedule hook sees only single messages).
//   - No transactions: a batch whose sysFlag carries a transaction type
//     (prepared, commit or rollback) is refused with MESSAGE_ILLEGAL
//     (CommitLog.asyncPutMessages); the entries' own TRAN_MSG properties
//     are stored as given, as in Java.
//
// Errors (*Error codes): TOPIC_NOT_EXIST (17); NO_PERMISSION (16) topic not
// writable, or a topic producers may not write
// (meta.IsSendForbidden: SCHEDULE_TOPIC_XXXX, the transaction topics,
// SELF_TEST_TOPIC, OFFSET_MOVED_EVENT, rmq_sys_*);
// INVALID_PARAMETER (29) queueId out of range; MESSAGE_ILLEGAL (13) body
// too large or bad properties, a timer message over --timer-max-delay-sec
// or with a non-numeric timer property ("timer message illegal, …" as
// Java's WHEEL_TIMER_MSG_ILLEGAL), and for a batch an empty or undecodable
// body, a %RETRY% topic, a topic over 127 characters or a transaction
// sysFlag, a half message without producer group, sysFlag 0x80 or the
// INNER_NUM property (checkInnerBatch); SYSTEM_ERROR (1)
// bad topic name, failed write; SYSTEM_BUSY (2) writer lane or queued bytes
// full, or "[TIMEOUT_CLEAN_QUEUE]" after waiting
// --wait-time-mills-in-send-queue; SERVICE_NOT_AVAILABLE (14) disk above
// --disk-space-warning-level-ratio or store not writable after a failed
// write (sendWriteError); GO_AWAY (1500) shutting down.

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strconv"
	"strings"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/broker/meta"
	"github.com/popshim/popshim/broker/timer"
	"github.com/popshim/popshim/broker/transaction"
	"github.com/popshim/popshim/codec"
)

// VersionV3_4_9 is MQVersion.Version.V3_4_9's ordinal
// (common/.../MQVersion.java): from it on a request's maxReconsumeTimes
// overrides the group's retry limit (SendRequest, SendBackRequest).
const VersionV3_4_9 = 121

// SendRequest is one produce request: the fields of
// SendMessageRequestHeader(V2).java that matter to the broker, the born
// host and the body. The core does not keep Body or its backing array
// after Send returns (the stored record is a copy), so the caller may
// release or reuse it then.
type SendRequest struct {
	ProducerGroup string // producerGroup (a); not validated, as in Java
	Topic         string // topic (b)
	// QueueID is the queue to write (e); negative: the broker picks one of
	// the topic's writable queues at random.
	QueueID       int32
	SysFlag       int32 // sysFlag (f): compression and transaction bits, stored as given; 0x80 refused (checkInnerBatch)
	BornTimestamp int64 // bornTimestamp (g): producer clock, Unix ms
	Flag          int32 // flag (h): user flag, stored as given (single message only)
	// Properties is the raw properties string (i; codec properties
	// layout). For a batch: the batch's own, checked for DELAY, not stored.
	Properties     string
	ReconsumeTimes int32 // reconsumeTimes (j)
	// MaxReconsumeTimes (l) overrides the group's retry limit of a %RETRY%
	// send when HasMaxReconsumeTimes and ClientVersion ≥ VersionV3_4_9.
	MaxReconsumeTimes    int32
	HasMaxReconsumeTimes bool
	// ClientVersion is the client's MQVersion ordinal (the remoting
	// header's version); a gRPC caller passes the version it speaks for.
	ClientVersion int32
	// BornHost is the producer's address (the peer of the connection),
	// written into the record's bornHost.
	BornHost netip.AddrPort
	// DefaultTopicQueueNums is the producer's defaultTopicQueueNums (d): a
	// topic this SEND auto-creates gets min(it, --default-topic-queue-nums)
	// queues, as TopicConfigManager.createTopicInSendMessageMethod; ≤ 0
	// (gRPC, an old client): --default-topic-queue-nums.
	DefaultTopicQueueNums int32
	// Batch says Body is a batch body (SEND_BATCH_MESSAGE: entries built
	// with codec.AppendBatchEntry), each entry a message of its own.
	Batch bool
	// Body is the message body, or the batch body when Batch is set. At
	// most --max-message-size bytes.
	Body []byte
}

// SendResult is the answer of a durable Send: the values of
// SendMessageResponseHeader.java and of gRPC's SendResultEntry.
type SendResult struct {
	// MsgID is the UNIQ_KEY property of a single message (the producer's,
	// or the one the broker added); "" for a batch, whose entries carry
	// the UNIQ_KEYs their producer set.
	MsgID string
	// OffsetMsgID is the stored record's offsetMsgId (store host +
	// physical offset, codec.OffsetMsgID); for a batch the entries' ids
	// joined with ",", in entry order; for a delayed message the timer
	// entry's.
	OffsetMsgID string
	// Topic is where the message was stored: the request's topic, or
	// %DLQ%<group> after a retry → DLQ diversion.
	Topic string
	// QueueID is the queue written (the one picked for a negative request
	// queueId; 0 after a DLQ diversion).
	QueueID int32
	// QueueOffset is the logical offset of the (first) record; entry i of
	// a batch has QueueOffset+i. 0 for a delayed message, which has no
	// queue offset until it is due.
	QueueOffset int64
	// Count is the number of records stored: 1, or the batch's entries.
	Count int
	// DeliverAtMillis is the due time (Unix ms) of a delayed message
	// stored as a timer entry; 0 when stored at once.
	DeliverAtMillis int64
	// RecallHandle is the handle RECALL_MESSAGE takes to cancel a timer
	// message (SendMessageResponseHeader.recallHandle; timer_delete.go);
	// "" for anything else.
	RecallHandle string
	// TransactionID is the UNIQ_KEY of a single message, as
	// SendMessageResponseHeader.transactionId carries it for every SEND;
	// for a half message the id END_TRANSACTION and the checks name
	// (gRPC: SendResultEntry.transaction_id); for a batch the batch's own
	// UNIQ_KEY when its header carries one, else "".
	TransactionID string
}

// sendTarget is where a send lands after validation.
type sendTarget struct {
	topic   string
	queueID int32
	props   string
	dlq     bool
}

// Send validates r and stores it (one message, or every entry of a batch)
// with one writer op; done gets the result once durable, or an *Error with
// the codes listed above. Any goroutine; never blocks. A refusal calls
// done before Send returns.
func (b *Broker) Send(r SendRequest, done func(SendResult, error)) {
	if r.Batch {
		b.sendBatch(&r, done)
		return
	}
	if len(r.Body) > b.Settings.MaxMessageBytes {
		done(SendResult{}, b.bodyTooLarge(len(r.Body)))
		return
	}
	t, e := b.sendTargetOf(&r)
	if e == nil {
		e = checkInnerBatch(r.SysFlag, r.Properties)
	}
	if e != nil {
		done(SendResult{}, e)
		return
	}
	now := b.Now()
	uniq, ok := codec.PropertyValue(t.props, codec.PropertyUniqClientMessageIDKeyIdx)
	if !ok {
		uniq = b.Uniq.Next(now)
		t.props, _ = codec.SetProperty(t.props, codec.PropertyUniqClientMessageIDKeyIdx, uniq)
	}
	var err error
	if t.props, err = b.stampProperties(t.props); err != nil {
		done(SendResult{}, &Error{Code: codec.MessageIllegal, Remark: err.Error()})
		return
	}
	if len(t.props) > codec.MaxSendPropertiesLen {
		done(SendResult{}, propertiesTooLong(len(t.props)))
		return
	}
	if transaction.IsHalf(t.props, r.ReconsumeTimes) {
		b.sendHalf(&r, t, uniq, now, done)
		return
	}
	var due int64
	if !t.dlq {
		sch, err := b.Delay.Resolve(t.props, t.topic, t.queueID, now)
		switch {
		case errors.Is(err, timer.ErrIllegal):
			done(SendResult{}, &Error{Code: codec.MessageIllegal, Remark: b.Delay.IllegalRemark()})
			return
		case err != nil:
			done(SendResult{}, &Error{Code: codec.MessageIllegal, Remark: err.Error()})
			return
		}
		t.props, due = sch.Props, sch.DueMillis
		if sch.DeleteKey != "" { // TIMER_DEL_UNIQKEY: a deletion marker (timer_delete.go)
			b.sendTimerDelete(t, sch, uniq, done)
			return
		}
	}
	m := codec.MessageExt{
		Message:        codec.Message{Topic: t.topic, Flag: r.Flag, Body: r.Body, Properties: t.props},
		QueueID:        t.queueID,
		SysFlag:        r.SysFlag,
		BornTimestamp:  r.BornTimestamp,
		BornHost:       r.BornHost,
		StoreTimestamp: now,
		StoreHost:      b.StoreHost(),
		ReconsumeTimes: r.ReconsumeTimes,
	}
	buf := getRecordBuf(codec.MessageRecordSize(&m))
	rec, err := codec.AppendMessage(buf.b, &m)
	if err != nil {
		putRecordBuf(buf)
		done(SendResult{}, &Error{Code: codec.MessageIllegal, Remark: err.Error()})
		return
	}
	b.submitSend(sendJob{b: b, t: t, recs: rec, buf: buf, n: 1, due: due, uniq: uniq, host: m.StoreHost,
		bodyBytes: len(r.Body), done: done})
}

// bodyTooLarge is the MESSAGE_ILLEGAL refusal of a body (or batch body) of
// n bytes over --max-message-size.
func (b *Broker) bodyTooLarge(n int) *Error {
	return Errorf(codec.MessageIllegal, "the message body size %d over max value %d", n, b.Settings.MaxMessageBytes)
}

// propertiesTooLong is the MESSAGE_ILLEGAL refusal of a message whose
// properties (n bytes, as stored) pass codec.MaxSendPropertiesLen.
func propertiesTooLong(n int) *Error {
	return Errorf(codec.MessageIllegal, "the message properties length %d over max value %d (%d less than a record's %d, room for what a POP and a retry add)",
		n, codec.MaxSendPropertiesLen, codec.PopPropertiesRoom, codec.MaxPropertiesLen)
}

// sendTargetOf validates topic and queue of a send and applies the retry →
// DLQ diversion. Memory only (a created topic's write is queued).
func (b *Broker) sendTargetOf(r *SendRequest) (sendTarget, *Error) {
	if e := b.lacking(codec.PermWrite, "sending message"); e != nil {
		// Java refuses only order topics (msgCheck's isOrderTopic): a
		// producer's queued SENDs to others are still stored.
		if tm, ok := b.Topics.Get(r.Topic); ok && tm.Order {
			return sendTarget{}, e
		}
	}
	if remark := meta.TopicNameRemark(r.Topic); remark != "" {
		return sendTarget{}, &Error{Code: codec.InvalidParameter, Remark: remark}
	}
	if meta.IsSendForbidden(r.Topic) {
		return sendTarget{}, Errorf(codec.NoPermission, "Sending message to topic[%s] is forbidden.", r.Topic)
	}
	tm, err := b.Topics.GetOrCreateForSend(r.Topic, r.DefaultTopicQueueNums)
	switch {
	case errors.Is(err, meta.ErrTopicNotExist):
		return sendTarget{}, Errorf(codec.TopicNotExist, "topic[%s] not exist, apply first please!", r.Topic)
	case errors.Is(err, batch.ErrBusy):
		return sendTarget{}, errBusy
	case err != nil:
		return sendTarget{}, &Error{Code: codec.SystemError, Remark: err.Error()}
	}
	if tm.Perm&codec.PermWrite == 0 {
		return sendTarget{}, Errorf(codec.NoPermission, "the topic[%s] sending message is forbidden", r.Topic)
	}
	t := sendTarget{topic: r.Topic, queueID: r.QueueID, props: codec.DeleteProperty(r.Properties, codec.PropertyPopCK)}
	if limit := max(tm.ReadQueueNums, tm.WriteQueueNums); t.queueID >= limit {
		return sendTarget{}, Errorf(codec.InvalidParameter, "request queueId[%d] is illegal, topic:[%s] topicConfig.writeQueueNums:[%d]", t.queueID, r.Topic, tm.WriteQueueNums)
	}
	if t.queueID < 0 {
		if tm.WriteQueueNums <= 0 {
			return sendTarget{}, Errorf(codec.NoPermission, "topic[%s] has no writable queue", r.Topic)
		}
		t.queueID = rand.Int32N(tm.WriteQueueNums)
	}
	if codec.IsRetryTopic(r.Topic) {
		group := retryTopicGroup(r.Topic)
		limit := b.GroupRetryMax(group)
		if r.HasMaxReconsumeTimes && r.ClientVersion >= VersionV3_4_9 {
			limit = r.MaxReconsumeTimes
		}
		// A group holding a live rebalance lock has orderly consumers, whose
		// resent message goes to the DLQ at once, as handleRetryAndDLQ's
		// isLockAllExpired check sends it: the 4.9 orderly client resends
		// with reconsumeTimes equal to the limit, not above it, and relies
		// on this (without it the message came back through the retry topic
		// every minute, out of order, for ever).
		if r.ReconsumeTimes > limit || !b.Locks.AllExpired(group) {
			dlq, err := b.Topics.EnsureDLQTopic(group)
			if err != nil {
				return sendTarget{}, SubmitError("topic["+codec.DLQTopic(group)+"] not exist", err)
			}
			t.topic, t.queueID, t.dlq = dlq.TopicName, 0, true
			// The DLQ copy's delay level reads -1, as SendMessageProcessor
			// .handleRetryAndDLQ writes it: a copy resent with its
			// properties (mqadmin, a DLQ re-drive) is not delayed again.
			t.props, _ = codec.SetProperty(t.props, codec.PropertyDelayTimeLevel, "-1")
		}
	}
	return t, nil
}

// retryTopicGroup returns the consumer group of a %RETRY% topic
// (KeyBuilder.parseGroup): the part before '+' for a V2 pop retry topic,
// else everything after the prefix.
func retryTopicGroup(topic string) string {
	if g, _, ok := codec.ParsePopRetryTopicV2(topic); ok {
		return g
	}
	return strings.TrimPrefix(topic, codec.RetryGroupTopicPrefix)
}

// stampProperties sets the properties a Java broker adds to every message
// it stores: CLUSTER (SendMessageProcessor), MSG_REGION and TRACE_ON
// (AbstractSendMessageProcessor.buildMsgContext; a client's consumer-side
// message trace drops messages without MSG_REGION). Errors: an empty
// setting (conf validation keeps separators and control bytes out).
//
// A producer's message holds none of the three: then they are appended in
// one concatenation (one allocation) instead of three SetProperty calls.
func (b *Broker) stampProperties(props string) (string, error) {
	s, trace := b.Settings, strconv.FormatBool(b.Settings.TraceOn)
	for _, k := range [...]string{codec.PropertyCluster, codec.PropertyMsgRegion, codec.PropertyTraceSwitch} {
		if strings.Contains(props, k+"\x01") {
			return setProperties(props, codec.PropertyCluster, s.ClusterName, codec.PropertyMsgRegion, s.RegionID,
				codec.PropertyTraceSwitch, trace)
		}
	}
	if s.ClusterName == "" || s.RegionID == "" {
		return props, fmt.Errorf("%w: empty cluster or region name", codec.ErrInvalidProperty)
	}
	if len(props) > 0 && props[len(props)-1] != codec.PropertySeparator {
		props += "\x02"
	}
	return props + codec.PropertyCluster + "\x01" + s.ClusterName + "\x02" + codec.PropertyMsgRegion + "\x01" +
		s.RegionID + "\x02" + codec.PropertyTraceSwitch + "\x01" + trace + "\x02", nil
}

// setProperties is codec.SetProperty for each key/value pair in kv, in
// order; the first error ends it.
func setProperties(props string, kv ...string) (string, error) {
	var err error
	for i := 0; i+1 < len(kv) && err == nil; i += 2 {
		props, err = codec.SetProperty(props, kv[i], kv[i+1])
	}
	return props, err
}
