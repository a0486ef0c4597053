package handler

// CONSUMER_SEND_MSG_BACK (36),
// broker/.../processor/AbstractSendMessageProcessor.java (consumerSendMsgBack).
// The PULL-path consumers send it when consumption fails; the proxy sends
// it (delayLevel -1, maxReconsumeTimes 0) to forward a message to the DLQ.
//
// Header (codec.ConsumerSendMsgBackRequestHeader): offset (the commit-log
// physical offset of the message, as in its record and offsetMsgId), group,
// delayLevel (0: 3 + reconsumeTimes; < 0: straight to the DLQ),
// originMsgId, originTopic, unitMode, maxReconsumeTimes, bname.
//
// Behaviour:
//   - The group is looked up (and auto-created when
//     --auto-create-subscription-group allows, as findSubscriptionGroupConfig);
//     an unknown group otherwise is SUBSCRIPTION_GROUP_NOT_EXIST (26).
//   - The message is looked up by physical offset on a reader goroutine.
//   - reconsumeTimes ≥ the limit (header maxReconsumeTimes from clients of
//     V3_4_9 on, else the group's retryMaxTimes, else 16) or delayLevel < 0:
//     a copy goes to %DLQ%<group> at once (one writer op).
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
// Response codes: SUCCESS (0) once durable; SYSTEM_ERROR (1) header errors,
// illegal group name, message not found by offset, failed write;
// SYSTEM_BUSY (2); SUBSCRIPTION_GROUP_NOT_EXIST (26) "subscription group not
// exist, <group> " + FAQ.

import (
	"errors"
	"strconv"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/revive"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleConsumerSendMsgBack(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeConsumerSendMsgBackRequestHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	if err := codec.ValidateGroup(h.Group); err != nil {
		reply.Code(c, req, codec.SystemError, err.Error())
		return
	}
	if _, ok := b.Groups.Find(h.Group); !ok {
		reply.Code(c, req, codec.SubscriptionGroupNotExist, "subscription group not exist, "+h.Group+" "+reply.FAQSuffix)
		return
	}
	version := req.Version
	if !b.SubmitRead(func() { b.sendBack(c, req, h, version) }) {
		reply.Code(c, req, codec.SystemBusy, reply.BusyRemark)
	}
}

// sendBack runs on a reader goroutine.
func (b *Broker) sendBack(c remoting.Conn, req *codec.Command, h codec.ConsumerSendMsgBackRequestHeader, version int32) {
	rec, err := b.Store.MessageByPhysicalOffset(h.Offset)
	if err != nil {
		remark := "look message by offset failed, " + strconv.FormatInt(h.Offset, 10)
		if !errors.Is(err, popstore.ErrNotFound) {
			remark += ": " + err.Error()
		}
		reply.Code(c, req, codec.SystemError, remark)
		return
	}
	m, _, err := codec.DecodeMessage(rec)
	if err != nil {
		reply.Code(c, req, codec.SystemError, "stored message undecodable: "+err.Error())
		return
	}
	limit := b.GroupRetryMax(h.Group)
	if h.HasMaxReconsumeTimes && version >= versionV3_4_9 {
		limit = h.MaxReconsumeTimes
	}
	if m.ReconsumeTimes >= limit || h.DelayLevel < 0 {
		b.sendBackToDLQ(c, req, h.Group, &m)
		return
	}
	level := h.DelayLevel
	if level == 0 {
		level = 3 + m.ReconsumeTimes
	}
	level = min(max(level, 1), int32(len(b.Delay.LevelMillis)))
	retry, err := b.Topics.EnsureRetryTopic(h.Group, b.retryQueueNums(h.Group))
	if err != nil {
		reply.Code(c, req, reply.SubmitCode(err), reply.SubmitRemark("topic["+codec.RetryGroupTopic(h.Group)+"] not exist", err))
		return
	}
	now := b.Now()
	due := now + b.Delay.LevelMillis[level-1]
	if err := revive.PrepareSendBackCopy(&m, retry.TopicName, b.StoreHost(), now); err != nil {
		reply.Code(c, req, codec.MessageIllegal, err.Error())
		return
	}
	for _, p := range [][2]string{{codec.PropertyDelayTimeLevel, strconv.Itoa(int(level))},
		{codec.PropertyRealTopic, m.Topic}, {codec.PropertyRealQueueID, strconv.Itoa(int(m.QueueID))}} {
		if m.Properties, err = codec.SetProperty(m.Properties, p[0], p[1]); err != nil {
			reply.Code(c, req, codec.MessageIllegal, err.Error())
			return
		}
	}
	rec, err2 := codec.AppendMessage(nil, &m)
	if err2 != nil {
		reply.Code(c, req, codec.MessageIllegal, err2.Error())
		return
	}
	op := &batch.Op{Lane: batch.LaneForeground, Bytes: len(rec),
		Apply: func(tx *popstore.Txn) error {
			_, err := tx.PutTimer(due, m.QueueID, rec)
			return err
		},
		Done: func(err error) {
			if err != nil {
				reply.Code(c, req, broker.WriteErrorCode(err), "send back failed: "+err.Error())
				return
			}
			b.Timers.NoteDurable(due)
			b.Metrics.TimerEnqueued.Inc()
			reply.Code(c, req, codec.Success, "")
		}}
	if err := b.Writer.Submit(op); err != nil {
		reply.Code(c, req, reply.SubmitCode(err), reply.SubmitRemark("send back", err))
	}
}

// sendBackToDLQ writes the DLQ copy of m at once.
func (b *Broker) sendBackToDLQ(c remoting.Conn, req *codec.Command, group string, m *codec.MessageExt) {
	dlq, err := b.Topics.EnsureDLQTopic(group)
	if err != nil {
		reply.Code(c, req, reply.SubmitCode(err), reply.SubmitRemark("topic["+codec.DLQTopic(group)+"] not exist", err))
		return
	}
	origin := m.Topic
	if err := revive.PrepareSendBackCopy(m, dlq.TopicName, b.StoreHost(), b.Now()); err != nil {
		reply.Code(c, req, codec.MessageIllegal, err.Error())
		return
	}
	rec, err := codec.AppendMessage(nil, m)
	if err != nil {
		reply.Code(c, req, codec.MessageIllegal, err.Error())
		return
	}
	op := &batch.Op{Lane: batch.LaneProduce, Bytes: len(rec),
		Apply: func(tx *popstore.Txn) error {
			_, _, err := tx.AppendMessage(dlq.TopicName, 0, rec)
			return err
		},
		Done: func(err error) {
			if err != nil {
				reply.Code(c, req, broker.WriteErrorCode(err), "send to DLQ failed: "+err.Error())
				return
			}
			b.Metrics.SendToDLQ.WithLabelValues(origin, group, broker.IsSystemTopic(origin)).Inc()
			reply.Code(c, req, codec.Success, "")
		}}
	if err := b.Writer.Submit(op); err != nil {
		reply.Code(c, req, reply.SubmitCode(err), reply.SubmitRemark("send to DLQ", err))
	}
}
