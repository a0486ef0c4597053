package handler

// AUTH_LIST_ACL (3010), AdminBrokerProcessor.listAcl; sent by mqadmin
// listAcl.
//
// Header (ListAclsRequestHeader.java): subjectFilter, resourceFilter
// (optional substrings of the subject key and of entry resource keys).
//
// Behaviour: a JSON array of AclInfo sorted by subject, entries filtered;
// no body when nothing matches.
//
// Response codes: SUCCESS (0).

import (
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleAuthListACL(c remoting.Conn, req *codec.Command) {
	acls := b.Auth.ListACLs(req.ExtFields["subjectFilter"], req.ExtFields["resourceFilter"])
	authJSON(c, req, acls, len(acls) == 0)
}
