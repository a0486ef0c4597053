package handler

// SET_MESSAGE_REQUEST_MODE (401).
//
// Header: none. Body: JSON SetMessageRequestModeRequestBody {topic,
// consumerGroup, mode: "POP"|"PULL", popShareQueueNum}.
//
// Behaviour: stores the mode for (topic, consumerGroup) durably (meta value
// "messageRequestMode", written through the writer's background lane) and
// answers once it is fsynced; QUERY_ASSIGNMENT reads it from then on. As in
// QueryAssignmentProcessor, %RETRY% topics are refused. An unknown topic is
// created when --auto-create-topic allows it (the admin step often runs
// before the first send), else refused.
//
// Response codes: SUCCESS (0); NO_PERMISSION (16) for %RETRY% topics;
// TOPIC_NOT_EXIST (17); INVALID_PARAMETER (29) for a mode other than POP or
// PULL, or an invalid group name; SYSTEM_BUSY (2) when the writer's lane is
// full; SYSTEM_ERROR (1) for a bad body or a failed write.

import (
	"github.com/popshim/popshim/broker/meta"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleSetMessageRequestMode(c remoting.Conn, req *codec.Command) {
	body, err := codec.DecodeSetMessageRequestModeRequestBody(req.Body)
	if err == nil && body.Topic == "" {
		err = &codec.FieldError{Field: "topic", Err: codec.ErrMissingField}
	}
	if err != nil {
		reply.Code(c, req, codec.SystemError, "set message request mode: "+err.Error())
		return
	}
	if codec.IsRetryTopic(body.Topic) {
		reply.Code(c, req, codec.NoPermission, "retry topic is not allowed to set mode")
		return
	}
	if err := codec.ValidateGroup(body.ConsumerGroup); err != nil {
		reply.Code(c, req, codec.InvalidParameter, err.Error())
		return
	}
	if body.Mode != codec.MessageRequestModePop && body.Mode != codec.MessageRequestModePull {
		reply.Code(c, req, codec.InvalidParameter, "mode must be POP or PULL, got "+body.Mode)
		return
	}
	if _, err := b.Topics.GetOrCreate(body.Topic); err != nil {
		if reply.IsWriterErr(err) {
			reply.SubmitError(c, req, err)
			return
		}
		reply.Code(c, req, codec.TopicNotExist, "topic "+body.Topic+" not exist")
		return
	}
	m := meta.RequestMode{Topic: body.Topic, ConsumerGroup: body.ConsumerGroup, Mode: body.Mode, PopShareQueueNum: body.PopShareQueueNum}
	if err := b.Topics.SetRequestMode(m, func(err error) { reply.Done(c, req, err) }); err != nil {
		reply.SubmitError(c, req, err)
	}
}
