package handler

// DELETE_SUBSCRIPTION_GROUP_LIST (5003),
// broker/.../processor/AdminBrokerProcessor.java deleteSubscriptionGroupList
// (5.5).
//
// Header: none. Body: {"groupNameList":[...],"cleanOffset":bool}
// (codec.DecodeDeleteSubscriptionGroupList).
//
// Behaviour: as DELETE_SUBSCRIPTIONGROUP (207) for every name, in one
// write; missing groups are not an error.
//
// Response codes: SUCCESS (0); INVALID_PARAMETER (29) when the list is
// empty or absent; SYSTEM_ERROR (1) for an undecodable body or a failed
// write; SYSTEM_BUSY (2).

import (
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
	if len(body.GroupNameList) == 0 {
		reply.Code(c, req, codec.InvalidParameter, "groupNameList is empty")
		return
	}
	if err := b.Groups.Delete(body.GroupNameList, body.CleanOffset, func(err error) { reply.Done(c, req, err) }); err != nil {
		reply.SubmitError(c, req, err)
	}
}
