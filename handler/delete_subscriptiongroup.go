package handler

// DELETE_SUBSCRIPTIONGROUP (207),
// broker/.../processor/AdminBrokerProcessor.java deleteSubscriptionGroup.
//
// Header (DeleteSubscriptionGroupRequestHeader.java): groupName
// (required), cleanOffset (optional, default false; mqadmin deleteSubGroup
// -r true).
//
// Behaviour:
//   - The group's configuration is removed; with cleanOffset its committed
//     consume offsets on every topic go in the same write. Its checkpoints,
//     %RETRY% and %DLQ% topics stay, as on a Java broker (mqadmin
//     deleteSubGroup -c deletes those topics with separate requests).
//   - A missing group is not an error: SUCCESS all the same.
//   - The reply waits until the write is fsynced. With
//     --auto-create-subscription-group on, the next HEART_BEAT, POP, PULL or
//     GET_SUBSCRIPTIONGROUP_CONFIG of the group creates it again with the
//     defaults, as in RocketMQ.
//
// Response codes: SUCCESS (0); SYSTEM_ERROR (1) for a missing groupName or
// a failed write; SYSTEM_BUSY (2) when the lane is full.

import (
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
	if err := b.Groups.Delete([]string{h.GroupName}, h.CleanOffset, func(err error) { reply.Done(c, req, err) }); err != nil {
		reply.SubmitError(c, req, err)
	}
}
