package handler

// SEND_MESSAGE (10) and SEND_MESSAGE_V2 (310),
// broker/.../processor/SendMessageProcessor.java.
//
// Header (codec.SendMessageRequestHeader; long names for 10, letters a..n
// for 310): producerGroup, topic, defaultTopic, defaultTopicQueueNums,
// queueId (negative: the broker picks one), sysFlag, bornTimestamp, flag,
// properties, reconsumeTimes, unitMode, maxReconsumeTimes, batch, bname.
// Body: the message body as the producer sent it (maybe compressed).
//
// Behaviour:
//   - Validated on the event loop; an unknown topic is auto-created when
//     --auto-create-topic allows it (TopicTable.GetOrCreate).
//   - The POP_CK property is stripped (clearReservedProperties), UNIQ_KEY is
//     added when missing, CLUSTER is set. Body, flag and sysFlag
//     (compression) are stored unchanged; born host is the peer, store
//     host this broker.
//   - A send to a %RETRY% topic whose reconsumeTimes exceeds the limit
//     (header maxReconsumeTimes, else the group's retryMaxTimes, else 16)
//     goes to %DLQ%<group> instead (handleRetryAndDLQ).
//   - One writer op on the produce lane appends the record (queueOffset and
//     physicalOffset assigned there); SUCCESS when durable.
//   - Delayed delivery (broker/timer, Settings.Resolve): DELAY level
//     1..N (--message-delay-level; above N: N), else TIMER_DELAY_SEC,
//     TIMER_DELAY_MS or TIMER_DELIVER_MS up to --timer-max-delay-sec
//     ahead. A delayed message is stored as a timer entry (same op,
//     REAL_TOPIC/REAL_QID and for timers TIMER_OUT_MS set) and appears in
//     its queue when due; the reply carries the entry's offsetMsgId and
//     queueOffset 0. A time now or past stores at once. Not delayed: DLQ
//     diversions, messages already carrying TIMER_OUT_MS.
//   - Not served: transactional half messages (TRAN_MSG=true) are refused
//     with NO_PERMISSION, as a Java broker with rejectTransactionMessage.
//
// Response codes: SUCCESS (0) with msgId (offsetMsgId), queueId,
// queueOffset, MSG_REGION, TRACE_ON; TOPIC_NOT_EXIST (17); NO_PERMISSION
// (16) topic not writable, transactional message, or a topic producers may
// not write (meta.IsSendForbidden: SCHEDULE_TOPIC_XXXX, the transaction
// topics, SELF_TEST_TOPIC, OFFSET_MOVED_EVENT, TBW102, rmq_sys_*); INVALID_PARAMETER (29)
// queueId out of range; MESSAGE_ILLEGAL (13) body too large or bad
// properties, or a timer message over --timer-max-delay-sec or with a
// non-numeric timer property ("timer message illegal, …" as Java's
// WHEEL_TIMER_MSG_ILLEGAL); SYSTEM_ERROR (1) header errors, bad topic name, failed write;
// SYSTEM_BUSY (2) writer lane or queued bytes full, or "[TIMEOUT_CLEAN_QUEUE]"
// after waiting --wait-time-mills-in-send-queue; SERVICE_NOT_AVAILABLE (14)
// disk above --disk-space-warning-level-ratio or store not writable after
// a failed write (sendWriteError).

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"strings"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/meta"
	"github.com/popshim/popshim/broker/timer"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/remoting"
)

// sendTarget is where a SEND lands after validation.
type sendTarget struct {
	topic   string
	queueID int32
	props   string
	dlq     bool
}

func (b *Broker) handleSendMessage(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeSendRequestHeader(req.Code, req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	if len(req.Body) > b.Settings.MaxMessageBytes {
		reply.Code(c, req, codec.MessageIllegal, fmt.Sprintf("the message body size %d over max value %d", len(req.Body), b.Settings.MaxMessageBytes))
		return
	}
	if v, _ := codec.PropertyValue(h.Properties, codec.PropertyTransactionPrepared); strings.EqualFold(v, "true") {
		reply.Code(c, req, codec.NoPermission, fmt.Sprintf("the broker[%s] sending transaction message is forbidden: popshim does not serve transactions", b.Settings.BrokerName))
		return
	}
	t, code, remark := b.sendTargetOf(&h, req.Version)
	if code != codec.Success {
		reply.Code(c, req, code, remark)
		return
	}
	now := b.Now()
	if _, ok := codec.PropertyValue(t.props, codec.PropertyUniqClientMessageIDKeyIdx); !ok {
		t.props, _ = codec.SetProperty(t.props, codec.PropertyUniqClientMessageIDKeyIdx, b.Uniq.Next(now))
	}
	if t.props, err = codec.SetProperty(t.props, codec.PropertyCluster, b.Settings.ClusterName); err != nil {
		reply.Code(c, req, codec.MessageIllegal, err.Error())
		return
	}
	var due int64
	if !t.dlq {
		sch, err := b.Delay.Resolve(t.props, t.topic, t.queueID, now)
		switch {
		case errors.Is(err, timer.ErrIllegal):
			reply.Code(c, req, codec.MessageIllegal, b.Delay.IllegalRemark())
			return
		case err != nil:
			reply.Code(c, req, codec.MessageIllegal, err.Error())
			return
		}
		t.props, due = sch.Props, sch.DueMillis
	}
	m := codec.MessageExt{
		Message:        codec.Message{Topic: t.topic, Flag: h.Flag, Body: req.Body, Properties: t.props},
		QueueID:        t.queueID,
		SysFlag:        h.SysFlag,
		BornTimestamp:  h.BornTimestamp,
		BornHost:       addrPortOf(c.RemoteAddr()),
		StoreTimestamp: now,
		StoreHost:      b.StoreHost(),
		ReconsumeTimes: h.ReconsumeTimes,
	}
	rec, err := codec.AppendMessage(nil, &m)
	if err != nil {
		reply.Code(c, req, codec.MessageIllegal, err.Error())
		return
	}
	if due > 0 {
		b.storeTimer(c, req, t, rec, due, len(req.Body))
		return
	}
	b.appendRecords(c, req, t, [][]byte{rec}, len(req.Body))
}

// storeTimer stores a delayed message as a timer entry due at due (one
// produce-lane op; the message reaches t.topic/t.queueID when the timer
// loop delivers it) and answers SUCCESS when durable, with the entry's
// offsetMsgId and queueOffset 0 (the message has no queue offset yet).
func (b *Broker) storeTimer(c remoting.Conn, req *codec.Command, t sendTarget, rec []byte, due int64, bodyBytes int) {
	req.Body = nil // as in appendRecords: rec is the one copy the op keeps
	var phys int64
	host := b.StoreHost()
	op := &batch.Op{
		Lane:  batch.LaneProduce,
		Bytes: len(rec),
		Apply: func(tx *popstore.Txn) (err error) {
			phys, err = tx.PutTimer(due, t.queueID, rec)
			return err
		},
		Done: func(err error) {
			if err != nil {
				code, remark := b.sendWriteError(err)
				reply.Code(c, req, code, remark)
				return
			}
			b.Timers.NoteDurable(due)
			resp := codec.NewResponse(req, codec.Success, "")
			codec.SendMessageResponseHeader{MsgID: codec.OffsetMsgID(host, phys), QueueID: t.queueID}.Encode(resp)
			reply.Respond(c, req, resp)
			b.Metrics.TimerEnqueued.Inc()
			b.Metrics.PutNums.Add(1)
			sys := broker.IsSystemTopic(t.topic)
			if !codec.IsRetryTopic(t.topic) {
				b.Metrics.MessagesIn.WithLabelValues(t.topic, "delay", sys).Inc()
				b.Metrics.ThroughputIn.WithLabelValues(t.topic, "delay", sys).Add(float64(bodyBytes))
			}
		},
	}
	if err := b.Writer.Submit(op); err != nil {
		code, remark := b.sendWriteError(err)
		reply.Code(c, req, code, remark)
	}
}

// sendTargetOf validates topic and queue of a SEND and applies the retry →
// DLQ diversion. It returns a response code other than SUCCESS to refuse.
func (b *Broker) sendTargetOf(h *codec.SendMessageRequestHeader, version int32) (sendTarget, int32, string) {
	if err := meta.ValidateTopicName(h.Topic); err != nil {
		return sendTarget{}, codec.SystemError, err.Error()
	}
	if meta.IsSendForbidden(h.Topic) {
		return sendTarget{}, codec.NoPermission, fmt.Sprintf("Sending message to topic[%s] is forbidden.", h.Topic)
	}
	tm, err := b.Topics.GetOrCreate(h.Topic)
	switch {
	case errors.Is(err, meta.ErrTopicNotExist):
		return sendTarget{}, codec.TopicNotExist, fmt.Sprintf("topic[%s] not exist, apply first please!", h.Topic)
	case reply.IsBusy(err):
		return sendTarget{}, codec.SystemBusy, reply.BusyRemark
	case err != nil:
		return sendTarget{}, codec.SystemError, err.Error()
	}
	if tm.Perm&codec.PermWrite == 0 {
		return sendTarget{}, codec.NoPermission, fmt.Sprintf("the topic[%s] sending message is forbidden", h.Topic)
	}
	t := sendTarget{topic: h.Topic, queueID: h.QueueID, props: codec.DeleteProperty(h.Properties, codec.PropertyPopCK)}
	if limit := max(tm.ReadQueueNums, tm.WriteQueueNums); t.queueID >= limit {
		return sendTarget{}, codec.InvalidParameter, fmt.Sprintf("request queueId[%d] is illegal, topic:[%s] topicConfig.writeQueueNums:[%d]", t.queueID, h.Topic, tm.WriteQueueNums)
	}
	if t.queueID < 0 {
		if tm.WriteQueueNums <= 0 {
			return sendTarget{}, codec.NoPermission, fmt.Sprintf("topic[%s] has no writable queue", h.Topic)
		}
		t.queueID = rand.Int32N(tm.WriteQueueNums)
	}
	if codec.IsRetryTopic(h.Topic) {
		group := retryTopicGroup(h.Topic)
		limit := b.GroupRetryMax(group)
		if h.HasMaxReconsumeTimes && version >= versionV3_4_9 {
			limit = h.MaxReconsumeTimes
		}
		if h.ReconsumeTimes > limit {
			dlq, err := b.Topics.EnsureDLQTopic(group)
			if err != nil {
				return sendTarget{}, reply.SubmitCode(err), reply.SubmitRemark("topic["+codec.DLQTopic(group)+"] not exist", err)
			}
			t.topic, t.queueID, t.dlq = dlq.TopicName, 0, true
		}
	}
	return t, codec.Success, ""
}

// versionV3_4_9 is MQVersion.Version.V3_4_9's ordinal: from it on the
// header's maxReconsumeTimes overrides the group's retry limit.
const versionV3_4_9 = 121

// retryTopicGroup returns the consumer group of a %RETRY% topic
// (KeyBuilder.parseGroup): the part before '+' for a V2 pop retry topic,
// else everything after the prefix.
func retryTopicGroup(topic string) string {
	if g, _, ok := codec.ParsePopRetryTopicV2(topic); ok {
		return g
	}
	return strings.TrimPrefix(topic, codec.RetryGroupTopicPrefix)
}

// appendRecords stores records (all of t.topic/t.queueID) in one
// produce-lane op and answers with the SEND response header when durable.
// bodyBytes feeds the throughput metric. It clears req.Body: callers must
// be done with it.
func (b *Broker) appendRecords(c remoting.Conn, req *codec.Command, t sendTarget, recs [][]byte, bodyBytes int) {
	// The records are the one copy of the bodies the queued op keeps:
	// drop the frame's (DecodeFrame's copy), which the Done closure would
	// otherwise hold through req until the write, doubling the memory of
	// every queued SEND.
	req.Body = nil
	offsets := make([]int64, len(recs))
	physs := make([]int64, len(recs))
	size := 0
	for _, r := range recs {
		size += len(r)
	}
	host := b.StoreHost()
	op := &batch.Op{
		Lane:  batch.LaneProduce,
		Bytes: size,
		Apply: func(tx *popstore.Txn) error {
			for i, r := range recs {
				qo, phys, err := tx.AppendMessage(t.topic, t.queueID, r)
				if err != nil {
					return err
				}
				offsets[i], physs[i] = qo, phys
			}
			return nil
		},
		Done: func(err error) {
			if err != nil {
				code, remark := b.sendWriteError(err)
				reply.Code(c, req, code, remark)
				return
			}
			ids := make([]string, len(recs))
			for i := range recs {
				ids[i] = codec.OffsetMsgID(host, physs[i])
			}
			resp := codec.NewResponse(req, codec.Success, "")
			codec.SendMessageResponseHeader{MsgID: strings.Join(ids, ","), QueueID: t.queueID, QueueOffset: offsets[0]}.Encode(resp)
			reply.Respond(c, req, resp)
			b.Metrics.PutNums.Add(uint64(len(recs)))
			sys := broker.IsSystemTopic(t.topic)
			if !codec.IsRetryTopic(t.topic) && !t.dlq {
				b.Metrics.MessagesIn.WithLabelValues(t.topic, "normal", sys).Add(float64(len(recs)))
				b.Metrics.ThroughputIn.WithLabelValues(t.topic, "normal", sys).Add(float64(bodyBytes))
			}
		},
	}
	if err := b.Writer.Submit(op); err != nil {
		code, remark := b.sendWriteError(err)
		reply.Code(c, req, code, remark)
	}
}

// sendWriteError maps the writer error of a SEND (a Submit refusal or the
// op's Done error) to its response, as SendMessageProcessor maps the
// PutMessageStatus of the same store state:
//   - shed after WaitTimeMillsInSendQueue → SYSTEM_BUSY (2),
//     "[TIMEOUT_CLEAN_QUEUE]…" (BrokerFastFailure); lane or queued-bytes
//     bound full → SYSTEM_BUSY with the [OVERLOAD] remark;
//   - disk above --disk-space-warning-level-ratio, or the store not
//     writable after a failed write (until the writer's probe reopens it)
//     → SERVICE_NOT_AVAILABLE (14), the code of a Java store that is not
//     writable (disk full), so producers retry on another broker;
//   - writer closed → GO_AWAY; bad names → MESSAGE_ILLEGAL (13); the
//     write that failed itself → SYSTEM_ERROR (1).
func (b *Broker) sendWriteError(err error) (int32, string) {
	var qt *batch.QueueTimeoutError
	switch {
	case errors.As(err, &qt):
		return codec.SystemBusy, fmt.Sprintf("[TIMEOUT_CLEAN_QUEUE]broker busy, start flow control for a while, period in queue: %dms, size of queue: %d",
			qt.Waited.Milliseconds(), qt.Queued)
	case errors.Is(err, batch.ErrBusy), errors.Is(err, batch.ErrClosed):
		return reply.SubmitCode(err), reply.SubmitRemark("store message", err)
	case errors.Is(err, batch.ErrDiskFull), errors.Is(err, batch.ErrFailed), errors.Is(err, popstore.ErrUnavailable):
		return codec.ServiceNotAvailable, "service not available now: the broker's disk is full or its store is not writable; retry on another broker (" + err.Error() + ")"
	}
	return broker.WriteErrorCode(err), "store message failed: " + err.Error()
}

// addrPortOf converts a connection's remote address for the bornHost field;
// anything that is not TCP/UDP becomes the zero address.
func addrPortOf(a net.Addr) netip.AddrPort {
	switch v := a.(type) {
	case *net.TCPAddr:
		return v.AddrPort()
	case *net.UDPAddr:
		return v.AddrPort()
	}
	if a != nil {
		if ap, err := netip.ParseAddrPort(a.String()); err == nil {
			return ap
		}
	}
	return netip.AddrPort{}
}
