package handler

// DELETE_SUBSCRIPTION_GROUP_LIST (5003): the remoting adapter of
// broker.Broker.DeleteSubscriptionGroups, where the behaviour and the
// response codes are listed
// (AdminBrokerProcessor.deleteSubscriptionGroupList, 5.5): as
// DELETE_SUBSCRIPTIONGROUP (207) for every name, in one write.
//
// Header: none. Body: {"groupNameList":[...],"cleanOffset":bool}
// (codec.DecodeDeleteSubscriptionGroupList); an undecodable body →
// SYSTEM_ERROR (1) "delete subscription group list body: <cause>"; an
// empty or absent list → INVALID_PARAMETER (29) (the core's refusal).
//
// Reply: the bare code and remark, once the deletion is durable.

import (
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleDeleteSubscriptionGroupList(c remoting.Conn, req *codec.Command) {
	body, err := codec.DecodeDeleteSubscriptionGroupList(req.Body)
	if err != nil {
		reply.Code(c, req, codec.SystemError, "delete subscription group list body: "+err.Error())
		return
	}
	b.DeleteSubscriptionGroups(broker.DeleteSubscriptionGroupsRequest{Groups: body.GroupNameList, CleanOffset: body.CleanOffset},
		func(err error) { replyOutcome(c, req, err) })
}
