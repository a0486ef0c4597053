package broker

// Timer message deletion: the SEND side of TIMER_DEL_UNIQKEY and the
// recall handle (broker/timer/cancel.go has the delivery side).
//
// Behaviour:
//   - A SEND whose properties make it a timer message (TIMER_DELIVER_MS,
//     TIMER_DELAY_SEC or TIMER_DELAY_MS in the future, within
//     --timer-max-delay-sec) and carry TIMER_DEL_UNIQKEY=<topic>+<UNIQ_KEY>
//     is a deletion marker (timer.Settings.Resolve sets DeleteKey): it is
//     stored, durably, in the marker key space for the slot of its
//     delivery time (timer.SlotOf) and is never delivered. When the timers
//     of that slot are delivered, the timer message of that key is
//     dropped, whichever of the two arrived first (TimerMessageStore's
//     per-slot deleteUniqKeys). The reply is the SEND reply of a timer
//     message: msgId the marker's offsetMsgId, queueOffset 0. A marker
//     time now or past is MESSAGE_ILLEGAL (13) with the timer remark, as
//     Java's WHEEL_TIMER_MSG_ILLEGAL.
//   - The SEND reply of a timer message (TIMER_OUT_MS set, not to a
//     %RETRY% topic) carries recallHandle (SendMessageProcessor
//     .attachRecallHandle), RecallMessageHandle.HandleV1's format:
//     base64url("v1 <topic> <brokerName> <timestamp> <UNIQ_KEY>"). Java
//     writes its floored TIMER_OUT_MS + 1 as timestamp; popshim keeps the
//     exact delivery time, so timestamp = TIMER_OUT_MS: in both cases
//     SlotOf(timestamp) is the message's slot, which is what RECALL_MESSAGE
//     (recall.go) marks. Delay-level messages get none, as in Java.

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/broker/timer"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// timerDeleteJob is the writer op of one deletion marker.
type timerDeleteJob struct {
	op    batch.Op
	slot  int64
	due   int64
	key   string
	phys  int64
	after func(phys int64, err error)
}

// Apply stores the marker. Writer goroutine.
func (j *timerDeleteJob) Apply(tx *popstore.Txn) (err error) {
	j.phys, err = tx.PutTimerDelete(j.slot, j.due, j.key)
	return err
}

// Done hands the outcome on. Writer's completer goroutine.
func (j *timerDeleteJob) Done(err error) { j.after(j.phys, err) }

// putTimerDelete stores a marker for key in the slot of due (one
// produce-lane op); after gets the marker's physical offset once durable,
// or the writer's error (also for a Submit refusal, on the caller's
// goroutine).
func (b *Broker) putTimerDelete(due int64, key string, after func(phys int64, err error)) {
	j := &timerDeleteJob{slot: timer.SlotOf(due), due: due, key: key, after: after}
	j.op = batch.Op{Lane: batch.LaneProduce, Bytes: 32 + len(key), Job: j}
	if err := b.Writer.Submit(&j.op); err != nil {
		after(0, err)
	}
}

// sendTimerDelete is the SEND path of a deletion marker (see above):
// target t, the resolved schedule and the message's UNIQ_KEY.
func (b *Broker) sendTimerDelete(t sendTarget, sch timer.Schedule, uniq string, done func(SendResult, error)) {
	host := b.StoreHost()
	b.putTimerDelete(sch.DueMillis, sch.DeleteKey, func(phys int64, err error) {
		if err != nil {
			done(SendResult{}, sendWriteError(err))
			return
		}
		b.Metrics.PutNums.Add(1)
		done(SendResult{MsgID: uniq, OffsetMsgID: codec.OffsetMsgID(host, phys), Topic: t.topic, QueueID: t.queueID,
			Count: 1, DeliverAtMillis: sch.DueMillis}, nil)
	})
}

// recallHandleOf returns the recall handle of a stored timer message
// (properties props, real topic topic), or "" when it gets none: no
// TIMER_OUT_MS (not a timer message), or a %RETRY% topic.
func (b *Broker) recallHandleOf(topic, props string) string {
	out, ok := codec.PropertyValue(props, codec.PropertyTimerOutMS)
	if !ok || strings.HasPrefix(topic, codec.RetryGroupTopicPrefix) {
		return ""
	}
	uniq, _ := codec.PropertyValue(props, codec.PropertyUniqClientMessageIDKeyIdx)
	return EncodeRecallHandle(topic, b.Settings.BrokerName, out, uniq)
}

// EncodeRecallHandle builds a RecallMessageHandle.HandleV1 string:
// base64url (padded) of "v1 topic brokerName timestamp messageId".
// Pure; any goroutine.
func EncodeRecallHandle(topic, brokerName, timestamp, messageID string) string {
	return base64.URLEncoding.EncodeToString([]byte(strings.Join([]string{"v1", topic, brokerName, timestamp, messageID}, " ")))
}

// RecallHandle is a decoded HandleV1.
type RecallHandle struct {
	Topic      string
	BrokerName string
	// TimestampMillis is the handle's timestamp (-1 when not a number,
	// as Java's NumberUtils.toLong).
	TimestampMillis int64
	MessageID       string // UNIQ_KEY of the timer message
}

// DecodeRecallHandle parses a handle as RecallMessageHandle.decodeHandle:
// base64url, space-separated, "v1" and at least 4 more fields. ok=false
// for anything else ("recall handle is invalid").
func DecodeRecallHandle(handle string) (RecallHandle, bool) {
	if handle == "" {
		return RecallHandle{}, false
	}
	raw, err := base64.URLEncoding.DecodeString(handle)
	if err != nil {
		if raw, err = base64.RawURLEncoding.DecodeString(handle); err != nil {
			return RecallHandle{}, false
		}
	}
	items := strings.Split(string(raw), " ")
	if len(items) < 5 || items[0] != "v1" {
		return RecallHandle{}, false
	}
	ts, err := strconv.ParseInt(items[3], 10, 64)
	if err != nil {
		ts = -1
	}
	return RecallHandle{Topic: items[1], BrokerName: items[2], TimestampMillis: ts, MessageID: items[4]}, true
}
