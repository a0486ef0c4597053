package handler

// UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST (225),
// broker/.../processor/AdminBrokerProcessor.java updateAndCreateSubscriptionGroupList.
//
// Header: none. Body: {"groupConfigList":[SubscriptionGroupConfig...]}
// (remoting/.../protocol/body/SubscriptionGroupList.java,
// codec.DecodeSubscriptionGroupList).
//
// Behaviour: as UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200) for every
// element, in one write: every name is checked first, and the configs
// become durable together or not at all. An empty or absent list stores
// nothing and answers SUCCESS.
//
// Response codes: as 200: SUCCESS (0); INVALID_PARAMETER (29) for the first
// illegal group name; SYSTEM_ERROR (1) for an undecodable body, a refused
// attribute operation or a failed write; SYSTEM_BUSY (2).

import (
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
	if len(cs) == 0 {
		reply.Code(c, req, codec.Success, "")
		return
	}
	b.putGroups(c, req, cs)
}
