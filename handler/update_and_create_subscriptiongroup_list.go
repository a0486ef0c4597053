package handler

// UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST (225): the remoting adapter of
// broker.Broker.UpdateSubscriptionGroups, where the behaviour and the
// response codes are listed
// (AdminBrokerProcessor.updateAndCreateSubscriptionGroupList): as
// UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200) for every element, in one
// write.
//
// Header: none. Body: {"groupConfigList":[SubscriptionGroupConfig...]}
// (remoting/.../protocol/body/SubscriptionGroupList.java,
// codec.DecodeSubscriptionGroupList). An empty or absent list stores
// nothing and answers SUCCESS; an undecodable body → SYSTEM_ERROR (1)
// "subscription group list body: <cause>".
//
// Reply: the bare code and remark, once the configurations are durable.

import (
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleUpdateAndCreateSubscriptionGroupList(c remoting.Conn, req *codec.Command) {
	cs, err := codec.DecodeSubscriptionGroupList(req.Body)
	if err != nil {
		reply.Code(c, req, codec.SystemError, "subscription group list body: "+err.Error())
		return
	}
	b.UpdateSubscriptionGroups(broker.UpdateSubscriptionGroupsRequest{Configs: cs}, func(err error) { replyOutcome(c, req, err) })
}
