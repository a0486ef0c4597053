package handler

// UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200),
// broker/.../processor/AdminBrokerProcessor.java updateAndCreateSubscriptionGroup
// with SubscriptionGroupManager.updateSubscriptionGroupConfig.
//
// Header: none. Body: one SubscriptionGroupConfig JSON
// (remoting/.../protocol/subscription/SubscriptionGroupConfig.java, read
// by codec.DecodeSubscriptionGroupConfig: members missing from the body
// take Java's defaults, unknown members are ignored). mqadmin updateSubGroup
// always sends every member.
//
// Behaviour:
//   - An empty body (or JSON null) stores nothing and answers SUCCESS, as
//     a Java broker does.
//   - The group name is checked as TopicValidator.validateGroup
//     (meta.ValidateGroupName).
//   - The stored configuration is replaced wholesale by the body; only
//     attributes are merged: "+key" sets, "-key" removes (the key must
//     exist), a new group accepts only "+"
//     (codec.ApplySubscriptionGroupAttributes).
//   - The write goes through the writer (background lane); the reply waits
//     until it is fsynced, and POP, PULL, NOTIFICATION, HEART_BEAT, revive
//     and GET_SUBSCRIPTIONGROUP_CONFIG see the new values from then on.
//
// Response codes: SUCCESS (0); INVALID_PARAMETER (29) for an illegal group
// name, with the Java broker's remark ("The specified group is blank.",
// "The specified group: <g>, contains illegal characters, allowing only
// ^[%|a-zA-Z0-9_-]+$", "The specified group: <g>, is longer than group max
// length: 120"); SYSTEM_ERROR (1) for an undecodable body, a refused
// attribute operation (as the exception a Java broker throws) or a failed
// write; SYSTEM_BUSY (2) when the lane is full.

import (
	"bytes"
	"errors"

	"github.com/popshim/popshim/broker/meta"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleUpdateAndCreateSubscriptionGroup(c remoting.Conn, req *codec.Command) {
	if body := bytes.TrimSpace(req.Body); len(body) == 0 || string(body) == "null" {
		reply.Code(c, req, codec.Success, "")
		return
	}
	cfg, err := codec.DecodeSubscriptionGroupConfig(req.Body)
	if err != nil {
		reply.Code(c, req, codec.SystemError, "subscription group body: "+err.Error())
		return
	}
	b.putGroups(c, req, []codec.SubscriptionGroupConfig{cfg})
}

// putGroups stores cs through the group table and answers req once the
// write is durable (200 and 225).
func (b *Broker) putGroups(c remoting.Conn, req *codec.Command, cs []codec.SubscriptionGroupConfig) {
	err := b.Groups.Put(cs, func(err error) {
		switch {
		case err == nil:
			reply.Code(c, req, codec.Success, "")
		case errors.Is(err, codec.ErrBadAttribute):
			reply.Code(c, req, codec.SystemError, err.Error())
		default:
			reply.Done(c, req, err)
		}
	})
	var nameErr *meta.GroupNameError
	switch {
	case err == nil:
	case errors.As(err, &nameErr):
		reply.Code(c, req, codec.InvalidParameter, nameErr.Remark)
	default:
		reply.SubmitError(c, req, err)
	}
}
