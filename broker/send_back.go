package broker

// SendBack: CONSUMER_SEND_MSG_BACK (36) of remoting,
// ForwardMessageToDeadLetterQueue of gRPC (delayLevel -1,
// maxReconsumeTimes 0); broker/.../processor/AbstractSendMessageProcessor.java
// (consumerSendMsgBack). The PULL-path consumers send it when consumption
// fails; the proxy sends it to forward a message to the DLQ.
//
// Request (SendBackRequest: codec.ConsumerSendMsgBackRequestHeader):
// offset (the commit-log physical offset of the message, as in its record
// and offsetMsgId), group, delayLevel (0: 3 + reconsumeTimes; < 0:
// straight to the DLQ), maxReconsumeTimes, originTopic (the topic label
// of rocketmq_send_to_dlq_messages_total, as consumerSendMsgBack labels
// it; when absent, the message's RETRY_TOPIC, else its topic); originMsgId,
// unitMode and bname are not used.
//
// Behaviour:
//   - The group is looked up (and auto-created when
//     --auto-create-subscription-group allows, as findSubscriptionGroupConfig);
//     an unknown group otherwise is SUBSCRIPTION_GROUP_NOT_EXIST (26).
//   - The message is looked up by physical offset on a reader goroutine.
//   - reconsumeTimes ≥ the limit (maxReconsumeTimes from clients of V3_4_9
//     on, else the group's retryMaxTimes, else 16) or delayLevel < 0: a
//     copy goes to %DLQ%<group> at once (one writer op).
//   - Otherwise the copy is delayed by the delay level
//     (--message-delay-level, default 1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m
//     9m 10m 20m 30m 1h 2h; clamped to 1..N): it is stored as a timer entry
//     for %RETRY%<group> queue 0 (one writer op, broker/timer) and the
//     timer loop appends it there when it is due — durable, at least once.
//     (Checkpoints marked as send-backs by earlier versions are still
//     delivered by revive.)
//   - The copy keeps body, flag, sysFlag, born timestamp/host and
//     properties, gets reconsumeTimes + 1, RETRY_TOPIC (original topic,
//     when absent) and ORIGIN_MESSAGE_ID (original offsetMsgId, when absent),
//     and for the delayed path REAL_TOPIC / REAL_QID as the Java schedule
//     service leaves them (DELAY is removed on delivery).
//
// Errors (*Error codes): SYSTEM_ERROR (1) illegal group name, message not
// found by offset, failed write; SYSTEM_BUSY (2) reader queue or writer lane
// full; SUBSCRIPTION_GROUP_NOT_EXIST (26) "subscription group not exist,
// <group> " + FAQ; MESSAGE_ILLEGAL (13) a copy whose properties cannot be
// set; GO_AWAY (1500) shutting down.

import (
	"errors"
	"strconv"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/broker/revive"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// SendBackRequest is one send-back: the fields of
// ConsumerSendMsgBackRequestHeader.java and the client's MQVersion ordinal
// (the remoting header's version; maxReconsumeTimes counts from
// VersionV3_4_9 on, a gRPC caller passes the version it speaks for).
type SendBackRequest struct {
	codec.ConsumerSendMsgBackRequestHeader
	ClientVersion int32
}

// SendBack checks the group on the caller's goroutine, then looks the
// message up on the reader pool and stores its retry (timer) or DLQ copy
// with one writer op; done gets nil once that is durable, or an *Error with
// the codes listed above. Any goroutine; never blocks.
func (b *Broker) SendBack(r SendBackRequest, done func(error)) {
	if err := codec.ValidateGroup(r.Group); err != nil {
		done(&Error{Code: codec.SystemError, Remark: err.Error()})
		return
	}
	if _, ok := b.Groups.Find(r.Group); !ok {
		done(&Error{Code: codec.SubscriptionGroupNotExist, Remark: "subscription group not exist, " + r.Group + " " + FAQSuffix})
		return
	}
	if e := b.lacking(codec.PermWrite, "sending message"); e != nil {
		done(e)
		return
	}
	if !b.SubmitRead(func() { b.sendBack(&r, done) }) {
		done(errBusy)
	}
}

// sendBack runs on a reader goroutine.
func (b *Broker) sendBack(r *SendBackRequest, done func(error)) {
	rec, err := b.Store.MessageByPhysicalOffset(r.Offset)
	if err != nil {
		remark := "look message by offset failed, " + strconv.FormatInt(r.Offset, 10)
		if !errors.Is(err, popstore.ErrNotFound) {
			remark += ": " + err.Error()
		}
		done(&Error{Code: codec.SystemError, Remark: remark})
		return
	}
	m, _, err := codec.DecodeMessage(rec)
	if err != nil {
		done(&Error{Code: codec.SystemError, Remark: "stored message undecodable: " + err.Error()})
		return
	}
	limit := b.GroupRetryMax(r.Group)
	if r.HasMaxReconsumeTimes && r.ClientVersion >= VersionV3_4_9 {
		limit = r.MaxReconsumeTimes
	}
	if m.ReconsumeTimes >= limit || r.DelayLevel < 0 {
		b.sendBackToDLQ(r.Group, originTopic(r.OriginTopic, &m), &m, done)
		return
	}
	level := r.DelayLevel
	if level == 0 {
		level = 3 + m.ReconsumeTimes
	}
	level = min(max(level, 1), int32(len(b.Delay.LevelMillis)))
	retry, err := b.Topics.EnsureRetryTopic(r.Group, b.RetryQueueNums(r.Group))
	if err != nil {
		done(SubmitError("topic["+codec.RetryGroupTopic(r.Group)+"] not exist", err))
		return
	}
	now := b.Now()
	due := now + b.Delay.LevelMillis[level-1]
	if err := revive.PrepareSendBackCopy(&m, retry.TopicName, b.StoreHost(), now); err != nil {
		done(&Error{Code: codec.MessageIllegal, Remark: err.Error()})
		return
	}
	for _, p := range [][2]string{{codec.PropertyDelayTimeLevel, strconv.Itoa(int(level))},
		{codec.PropertyRealTopic, m.Topic}, {codec.PropertyRealQueueID, strconv.Itoa(int(m.QueueID))}} {
		if m.Properties, err = codec.SetProperty(m.Properties, p[0], p[1]); err != nil {
			done(&Error{Code: codec.MessageIllegal, Remark: err.Error()})
			return
		}
	}
	rec, err = codec.AppendMessage(nil, &m)
	if err != nil {
		done(&Error{Code: codec.MessageIllegal, Remark: err.Error()})
		return
	}
	queueID := m.QueueID
	op := &batch.Op{Lane: batch.LaneForeground, Bytes: len(rec),
		Apply: func(tx *popstore.Txn) error {
			_, err := tx.PutTimer(due, queueID, rec)
			return err
		},
		Done: func(err error) {
			if err != nil {
				done(writeFailed("send back", err))
				return
			}
			b.Timers.NoteDurable(due)
			b.Metrics.TimerEnqueued.Inc()
			done(nil)
		}}
	if err := b.Writer.Submit(op); err != nil {
		done(SubmitError("send back", err))
	}
}

// originTopic is the topic a send-back's message was first sent to: the
// request's originTopic, else the message's RETRY_TOPIC, else its topic
// (a retry copy's topic is %RETRY%<group>).
func originTopic(header string, m *codec.MessageExt) string {
	if header != "" {
		return header
	}
	if t, ok := m.Property(codec.PropertyRetryTopic); ok && t != "" {
		return t
	}
	return m.Topic
}

// sendBackToDLQ writes the DLQ copy of m at once; origin labels the DLQ
// counter. Reader goroutine.
func (b *Broker) sendBackToDLQ(group, origin string, m *codec.MessageExt, done func(error)) {
	dlq, err := b.Topics.EnsureDLQTopic(group)
	if err != nil {
		done(SubmitError("topic["+codec.DLQTopic(group)+"] not exist", err))
		return
	}
	err = revive.PrepareSendBackCopy(m, dlq.TopicName, b.StoreHost(), b.Now())
	if err == nil {
		// The DLQ copy's level reads 0, as consumerSendMsgBack writes it.
		m.Properties, err = codec.SetProperty(m.Properties, codec.PropertyDelayTimeLevel, "0")
	}
	if err != nil {
		done(&Error{Code: codec.MessageIllegal, Remark: err.Error()})
		return
	}
	rec, err := codec.AppendMessage(nil, m)
	if err != nil {
		done(&Error{Code: codec.MessageIllegal, Remark: err.Error()})
		return
	}
	op := &batch.Op{Lane: batch.LaneProduce, Bytes: len(rec),
		Apply: func(tx *popstore.Txn) error {
			_, _, err := tx.AppendMessage(dlq.TopicName, 0, rec)
			return err
		},
		Done: func(err error) {
			if err != nil {
				done(writeFailed("send to DLQ", err))
				return
			}
			b.Metrics.SendToDLQ.WithLabelValues(origin, group, IsSystemTopic(origin)).Inc()
			done(nil)
		}}
	if err := b.Writer.Submit(op); err != nil {
		done(SubmitError("send to DLQ", err))
	}
}
