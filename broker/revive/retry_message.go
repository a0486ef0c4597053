package revive

import (
	"fmt"
	"net/netip"
	"strconv"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// retryPlan is where revive puts the copy of one expired message.
type retryPlan struct {
	topic  string // pop retry topic, or %DLQ%<group>
	dlq    bool
	origin string // the original topic (DLQ_ORIGIN_TOPIC), the topic label of rocketmq_send_to_dlq_messages_total
	record []byte // the new stored record, queueId 0, offsets patched at append
}

// maxReconsumeFor returns the retry limit of a message: its
// MAX_RECONSUME_TIMES property, else groupRetryMax.
func (r *Reviver) maxReconsumeFor(group string, m *codec.MessageExt) int32 {
	if v, ok := m.Property(codec.PropertyMaxReconsumeTimes); ok {
		if n, err := strconv.ParseInt(v, 10, 32); err == nil && n >= 0 {
			return int32(n)
		}
	}
	return r.d.RetryMax(group)
}

// planRetry builds the copy revive writes for an expired checkpoint whose
// message is rec (pop/PopConsumerService.reviveRetry): the pop retry topic
// of (group, topic) — or the checkpoint's own topic when it already is a
// retry topic — queue 0, reconsumeTimes + 1 (unchanged for a suspended
// CHANGE), body, flag, sysFlag (compression), born timestamp and every
// property kept, 1ST_POP_TIME set to the checkpoint's popTime on the first
// retry, born and store host this broker. Once the message has been
// delivered maxReconsumeFor times it goes to %DLQ%<group> instead, with
// DLQ_ORIGIN_TOPIC and DLQ_ORIGIN_MESSAGE_ID.
func (r *Reviver) planRetry(ck *popstore.Checkpoint, rec []byte) (retryPlan, error) {
	m, _, err := codec.DecodeMessage(rec)
	if err != nil {
		return retryPlan{}, err
	}
	group := ck.Key.Group
	if ck.ReviveQid == SendBackReviveQid {
		return r.planSendBack(group, &m)
	}
	origin := ck.Key.Topic
	if t, _, ok := codec.ParsePopRetryTopic(origin, group); ok {
		origin = t
	}
	var p retryPlan
	if m.ReconsumeTimes >= r.maxReconsumeFor(group, &m) {
		p.dlq, p.origin = true, origin
		if t, ok := m.Property(codec.PropertyRetryTopic); ok && t != "" && codec.IsRetryTopic(origin) {
			p.origin = t // %RETRY%<group>: the metric names the topic before the first send-back
		}
		p.topic = codec.DLQTopic(group)
		m.Properties, err = setProps(m.Properties,
			codec.PropertyDLQOriginTopic, origin,
			codec.PropertyDLQOriginMessageID, m.MsgID())
		if err != nil {
			return retryPlan{}, err
		}
	} else {
		switch {
		case codec.IsRetryTopic(ck.Key.Topic):
			p.topic = ck.Key.Topic
		case r.set.RetryTopicV2:
			p.topic = codec.PopRetryTopicV2(group, ck.Key.Topic)
		default:
			p.topic = codec.PopRetryTopicV1(group, ck.Key.Topic)
		}
	}
	if _, ok := m.Property(codec.PropertyFirstPopTime); !ok || m.ReconsumeTimes == 0 {
		if m.Properties, err = codec.SetProperty(m.Properties, codec.PropertyFirstPopTime, strconv.FormatInt(ck.PopTimeMillis, 10)); err != nil {
			return retryPlan{}, err
		}
	}
	m.Properties = codec.DeleteProperty(m.Properties, codec.PropertyPopCK)
	if !ck.Suspend {
		m.ReconsumeTimes++
	}
	host := r.d.StoreHost()
	m.Topic = p.topic
	m.QueueID = 0
	m.QueueOffset, m.PhysicalOffset = 0, 0
	m.BornHost, m.StoreHost = host, host
	m.StoreTimestamp = r.d.Now()
	if p.record, err = codec.AppendMessage(nil, &m); err != nil {
		return retryPlan{}, err
	}
	return p, nil
}

// setProps sets key/value pairs (kv alternates keys and values) on a
// properties string; empty values are skipped.
func setProps(props string, kv ...string) (string, error) {
	if len(kv)%2 != 0 {
		return props, fmt.Errorf("revive: setProps needs key/value pairs")
	}
	var err error
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == "" {
			continue
		}
		if props, err = codec.SetProperty(props, kv[i], kv[i+1]); err != nil {
			return props, err
		}
	}
	return props, nil
}

// planSendBack builds the delayed copy of a CONSUMER_SEND_MSG_BACK
// checkpoint: %RETRY%<group>, queue 0, with REAL_TOPIC / REAL_QID as the
// Java schedule service leaves them after the delay.
func (r *Reviver) planSendBack(group string, m *codec.MessageExt) (retryPlan, error) {
	target := codec.RetryGroupTopic(group)
	if err := PrepareSendBackCopy(m, target, r.d.StoreHost(), r.d.Now()); err != nil {
		return retryPlan{}, err
	}
	var err error
	if m.Properties, err = setProps(m.Properties, codec.PropertyRealTopic, target, codec.PropertyRealQueueID, "0"); err != nil {
		return retryPlan{}, err
	}
	rec, err := codec.AppendMessage(nil, m)
	if err != nil {
		return retryPlan{}, err
	}
	return retryPlan{topic: target, record: rec}, nil
}

// SendBackReviveQid marks a checkpoint written by CONSUMER_SEND_MSG_BACK:
// revive delivers it to %RETRY%<group> (the pull retry topic) instead of a
// pop retry topic. POP checkpoints carry reviveQid 0.
const SendBackReviveQid int32 = -36

// PrepareSendBackCopy turns the stored message m into its send-back copy
// for target (in place): RETRY_TOPIC and ORIGIN_MESSAGE_ID when absent,
// WAIT=false and no DELAY (the caller sets the level), reconsumeTimes + 1,
// queue 0, store host and time of this broker (born host and time kept,
// as the Java broker does; AbstractSendMessageProcessor.consumerSendMsgBack
// sets WAIT=false before it serialises the properties).
func PrepareSendBackCopy(m *codec.MessageExt, target string, storeHost netip.AddrPort, nowMillis int64) error {
	props := m.Properties
	var err error
	if _, ok := codec.PropertyValue(props, codec.PropertyRetryTopic); !ok {
		if props, err = codec.SetProperty(props, codec.PropertyRetryTopic, m.Topic); err != nil {
			return err
		}
	}
	if _, ok := codec.PropertyValue(props, codec.PropertyOriginMessageID); !ok {
		if props, err = codec.SetProperty(props, codec.PropertyOriginMessageID, m.OffsetMsgID()); err != nil {
			return err
		}
	}
	props = codec.DeleteProperty(codec.DeleteProperty(props, codec.PropertyPopCK), codec.PropertyDelayTimeLevel)
	if m.Properties, err = codec.SetProperty(props, codec.PropertyWaitStoreMsgOK, "false"); err != nil {
		return err
	}
	m.Topic = target
	m.QueueID = 0
	m.QueueOffset, m.PhysicalOffset = 0, 0
	m.ReconsumeTimes++
	m.StoreHost = storeHost
	m.StoreTimestamp = nowMillis
	return nil
}
