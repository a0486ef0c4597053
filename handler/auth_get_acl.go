package handler

// AUTH_GET_ACL (3009), AdminBrokerProcessor.getAcl; sent by mqadmin
// getAcl.
//
// Header (GetAclRequestHeader.java): subject ("User:<name>").
//
// Behaviour: the subject's AclInfo JSON; no body when it has no ACL.
//
// Response codes: SUCCESS (0); NO_PERMISSION (16) "The subject is not
// exist." for an unknown user.

import (
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleAuthGetACL(c remoting.Conn, req *codec.Command) {
	info, has, err := b.Auth.GetACL(req.ExtFields["subject"])
	if err != nil {
		reply.Code(c, req, codec.NoPermission, err.Error())
		return
	}
	authJSON(c, req, info, !has)
}
