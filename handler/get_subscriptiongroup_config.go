package handler

// GET_SUBSCRIPTIONGROUP_CONFIG (352),
// broker/.../processor/AdminBrokerProcessor.java getSubscriptionGroup. The
// 5.5 proxy asks it for every consumer group a gRPC client registers
// (ClusterMetadataService); without a SUCCESS it refuses the group with
// "group not found".
//
// Header (GetSubscriptionGroupConfigRequestHeader.java): group (required).
//
// Behaviour: findSubscriptionGroupConfig (meta.GroupTable.Ensure): a known
// group is answered at once; an unknown one is created with
// SubscriptionGroupConfig's defaults when --auto-create-subscription-group
// is on (or the name starts with CID_RMQ_SYS_) and answered once that
// write is fsynced; otherwise, and for an illegal name, it does not exist.
// The body is the group's SubscriptionGroupConfig JSON as a 5.5 broker
// writes it (codec.AppendSubscriptionGroupConfig: members sorted,
// "attributes" always present).
//
// Response codes: SUCCESS (0) with the body; SUBSCRIPTION_GROUP_NOT_EXIST
// (26) "No group in this broker"; SYSTEM_ERROR (1) for a missing group
// field or a failed write; SYSTEM_BUSY (2) when the creation could not be
// queued.

import (
	"errors"

	"github.com/popshim/popshim/broker/meta"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleGetSubscriptionGroupConfig(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeGetSubscriptionGroupConfigRequestHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	b.Groups.Ensure(h.Group, func(g popstore.GroupMeta, err error) {
		switch {
		case err == nil:
			cfg := g.Config()
			resp := codec.NewResponse(req, codec.Success, "")
			resp.Body = codec.AppendSubscriptionGroupConfig(nil, &cfg)
			reply.Respond(c, req, resp)
		case errors.Is(err, meta.ErrGroupNotExist):
			reply.Code(c, req, codec.SubscriptionGroupNotExist, "No group in this broker")
		case reply.IsWriterErr(err):
			reply.Code(c, req, reply.SubmitCode(err), reply.SubmitRemark("create subscription group", err))
		default:
			reply.Done(c, req, err)
		}
	})
}
