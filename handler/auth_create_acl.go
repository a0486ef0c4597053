package handler

// AUTH_CREATE_ACL (3006) and AUTH_UPDATE_ACL (3007),
// AdminBrokerProcessor.createAcl / updateAcl (both merge, as
// AuthorizationMetadataManagerImpl does); sent by mqadmin createAcl and
// updateAcl.
//
// Header (CreateAclRequestHeader.java, UpdateAclRequestHeader.java):
// subject ("User:<name>"). Body: AclInfo JSON (subject, policies of
// entries: resource "Topic:t" / "Group:g*" / "*", actions, sourceIps,
// decision).
//
// Behaviour: each entry replaces the subject's entry for the same
// resource and policy type or is added; stored durably, reply after fsync.
//
// Response codes: SUCCESS (0); SYSTEM_ERROR (1) "The body of acl is null"
// for a body without policies, or a failed write; NO_PERMISSION (16) with
// RocketMQ's validation message ("The subject of User:x is not exist.",
// "The actions is empty.", "The source ip is invalid.", "The decision is
// null or illegal.", ...); SYSTEM_BUSY (2).

import (
	"github.com/popshim/popshim/auth"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleAuthPutACL(c remoting.Conn, req *codec.Command) {
	var info auth.AclInfo
	if !decodeAuthBody(c, req, &info) {
		return
	}
	if len(info.Policies) == 0 {
		reply.Code(c, req, codec.SystemError, "The body of acl is null")
		return
	}
	if err := b.Auth.PutACL(info, req.ExtFields["subject"], authDone(c, req)); err != nil {
		authStarted(c, req, err)
	}
}
