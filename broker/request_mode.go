package broker

// SetMessageRequestMode: SET_MESSAGE_REQUEST_MODE (401) of remoting;
// broker/.../processor/QueryAssignmentProcessor.java setMessageRequestMode
// with loadbalance/MessageRequestModeManager.java.
//
// Request (MessageRequestModeRequest; body/SetMessageRequestModeRequestBody.java):
// topic, consumerGroup, mode ("POP" or "PULL"), popShareQueueNum.
//
// Behaviour: stores the mode for (topic, consumerGroup) durably (meta value
// "messageRequestMode", written through the writer's background lane) and
// answers once it is fsynced; Assignment reads it from then on. As in
// QueryAssignmentProcessor, %RETRY% topics are refused. An unknown topic is
// created when --auto-create-topic allows it (the admin step often runs
// before the first send), else refused.
//
// Response codes: SUCCESS (0); NO_PERMISSION (16) for %RETRY% topics;
// TOPIC_NOT_EXIST (17) "topic <t> not exist"; INVALID_PARAMETER (29) for a
// mode other than POP or PULL, or an invalid group name; SYSTEM_BUSY (2)
// when the writer's lane is full; SYSTEM_ERROR (1) "set message request
// mode: the custom field <topic> is null" without a topic, "write failed:
// <cause>" for a failed write.

import (
	"github.com/popshim/popshim/broker/meta"
	"github.com/popshim/popshim/codec"
)

// MessageRequestModeRequest is one SET_MESSAGE_REQUEST_MODE setting.
type MessageRequestModeRequest struct {
	Topic         string // required; not a %RETRY% topic
	ConsumerGroup string // must pass codec.ValidateGroup
	// Mode is codec.MessageRequestModePop or codec.MessageRequestModePull.
	Mode string
	// PopShareQueueNum is how many other consumers' shares a POP consumer
	// also pops (≤ 0: every consumer pops every queue).
	PopShareQueueNum int32
}

// SetMessageRequestMode validates r, creates its topic when missing and
// allowed, and stores the mode; done gets nil once it is durable, or an
// *Error with the codes above: on the caller's goroutine for a refusal,
// else on the writer's completer goroutine. Any goroutine; never blocks.
func (b *Broker) SetMessageRequestMode(r MessageRequestModeRequest, done func(error)) {
	if r.Topic == "" {
		done(&Error{Code: codec.SystemError,
			Remark: "set message request mode: " + (&codec.FieldError{Field: "topic", Err: codec.ErrMissingField}).Error()})
		return
	}
	if codec.IsRetryTopic(r.Topic) {
		done(&Error{Code: codec.NoPermission, Remark: "retry topic is not allowed to set mode"})
		return
	}
	if err := codec.ValidateGroup(r.ConsumerGroup); err != nil {
		done(&Error{Code: codec.InvalidParameter, Remark: err.Error()})
		return
	}
	if r.Mode != codec.MessageRequestModePop && r.Mode != codec.MessageRequestModePull {
		done(&Error{Code: codec.InvalidParameter, Remark: "mode must be POP or PULL, got " + r.Mode})
		return
	}
	if _, err := b.Topics.GetOrCreate(r.Topic); err != nil {
		if IsWriterErr(err) {
			done(SubmitError("", err))
			return
		}
		done(&Error{Code: codec.TopicNotExist, Remark: "topic " + r.Topic + " not exist"})
		return
	}
	m := meta.RequestMode{Topic: r.Topic, ConsumerGroup: r.ConsumerGroup, Mode: r.Mode, PopShareQueueNum: r.PopShareQueueNum}
	if err := b.Topics.SetRequestMode(m, func(err error) { done(adminWriteErr(err)) }); err != nil {
		done(SubmitError("", err))
	}
}

// adminWriteErr is the answer of an admin write once it settled: nil when
// durable, else SYSTEM_ERROR (1) "write failed: <cause>".
func adminWriteErr(err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: codec.SystemError, Remark: "write failed: " + err.Error()}
}
