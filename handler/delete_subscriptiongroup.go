package handler

// DELETE_SUBSCRIPTIONGROUP (207): the remoting adapter of
// broker.Broker.DeleteSubscriptionGroups, where the behaviour and the
// response codes are listed (AdminBrokerProcessor.deleteSubscriptionGroup).
//
// Header (DeleteSubscriptionGroupRequestHeader.java): groupName
// (required), cleanOffset (optional, default false; mqadmin deleteSubGroup
// -r true). An undecodable header → SYSTEM_ERROR (1) naming the field.
//
// Reply: the bare code and remark, once the deletion is durable; a missing
// group is SUCCESS all the same.

import (
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleDeleteSubscriptionGroup(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeDeleteSubscriptionGroupRequestHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	b.DeleteSubscriptionGroups(broker.DeleteSubscriptionGroupsRequest{Groups: []string{h.GroupName}, CleanOffset: h.CleanOffset},
		func(err error) { replyOutcome(c, req, err) })
}
