package broker

// Recall: RECALL_MESSAGE (370) of remoting (RocketMQ 5.5;
// broker/.../processor/RecallMessageProcessor.java): cancel a pending
// timer message with the recallHandle its SEND reply carried
// (timer_delete.go).
//
// Behaviour, in Java's order of checks:
//   - --recall-message-enable off (the default, as recallMessageEnable) →
//     NO_PERMISSION (16) "recall failed, operation is forbidden".
//   - The request's topic must exist → TOPIC_NOT_EXIST (17) "recall
//     failed, the topic[<t>] not exist".
//   - The handle must decode (RecallMessageHandle.decodeHandle) →
//     ILLEGAL_OPERATION (604) "recall handle is invalid"; name the
//     request's topic → "recall failed, topic not match"; and this broker
//     → "recall failed, broker service not available".
//   - Its timestamp must be in the future and less than
//     --timer-max-delay-sec ahead → ILLEGAL_OPERATION "recall failed,
//     timestamp invalid" (a message already delivered cannot be recalled).
//   - Then a deletion marker for <topic>+<messageId> in the slot of the
//     timestamp is stored through the writer (what Java's putMessage of
//     its marker message amounts to); done gets the handle's message id
//     once it is durable. The timer message is dropped when its slot is
//     delivered (broker/timer/cancel.go). As in Java, a handle whose
//     message does not exist (or was already recalled) still succeeds.
//
// Errors besides the above: SYSTEM_BUSY (2), SERVICE_NOT_AVAILABLE (14),
// GO_AWAY (1500), SYSTEM_ERROR (1) from the writer, as for a SEND.

import (
	"github.com/popshim/popshim/broker/timer"
	"github.com/popshim/popshim/codec"
)

// RecallRequest is one RECALL_MESSAGE (RecallMessageRequestHeader.java).
type RecallRequest struct {
	ProducerGroup string // producerGroup: logged only
	Topic         string // topic: must be the handle's
	RecallHandle  string // recallHandle: from the SEND reply
}

// RecallResult is a durable recall: the message id the reply carries
// (RecallMessageResponseHeader.msgId).
type RecallResult struct {
	MsgID string // the handle's UNIQ_KEY
}

// Recall checks r and stores the deletion marker its handle names; done
// gets the result once durable, or an *Error as listed above. Any
// goroutine; never blocks. A refusal calls done before Recall returns.
func (b *Broker) Recall(r RecallRequest, done func(RecallResult, error)) {
	if !b.Cfg.RecallMessageEnable {
		done(RecallResult{}, &Error{Code: codec.NoPermission, Remark: "recall failed, operation is forbidden"})
		return
	}
	if _, ok := b.Topics.Get(r.Topic); !ok {
		done(RecallResult{}, Errorf(codec.TopicNotExist, "recall failed, the topic[%s] not exist", r.Topic))
		return
	}
	h, ok := DecodeRecallHandle(r.RecallHandle)
	switch {
	case !ok:
		done(RecallResult{}, &Error{Code: codec.IllegalOperation, Remark: "recall handle is invalid"})
		return
	case h.Topic != r.Topic:
		done(RecallResult{}, &Error{Code: codec.IllegalOperation, Remark: "recall failed, topic not match"})
		return
	case h.BrokerName != b.Settings.BrokerName:
		done(RecallResult{}, &Error{Code: codec.IllegalOperation, Remark: "recall failed, broker service not available"})
		return
	}
	if left := h.TimestampMillis - b.Now(); left <= 0 || left >= b.Delay.MaxDelayMillis {
		done(RecallResult{}, &Error{Code: codec.IllegalOperation, Remark: "recall failed, timestamp invalid"})
		return
	}
	b.putTimerDelete(h.TimestampMillis, timer.DeleteKeyOf(h.Topic, h.MessageID), func(_ int64, err error) {
		if err != nil {
			done(RecallResult{}, sendWriteError(err))
			return
		}
		done(RecallResult{MsgID: h.MessageID}, nil)
	})
}
