package handler

// AUTH_DELETE_ACL (3008), AdminBrokerProcessor.deleteAcl; sent by mqadmin
// deleteAcl.
//
// Header (DeleteAclRequestHeader.java): subject, policyType (optional,
// Custom), resource (optional: without it the whole ACL goes).
//
// Behaviour: the entry (or ACL) is removed durably, reply after fsync; a
// policy left empty is removed, an ACL left empty too.
//
// Response codes: SUCCESS (0); NO_PERMISSION (16) "The subject is null.",
// "The subject is not exist.", "The acl is not exist."; SYSTEM_ERROR (1)
// when the write fails; SYSTEM_BUSY (2).

import (
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleAuthDeleteACL(c remoting.Conn, req *codec.Command) {
	f := req.ExtFields
	if err := b.Auth.DeleteACL(f["subject"], f["policyType"], f["resource"], authDone(c, req)); err != nil {
		authStarted(c, req, err)
	}
}
