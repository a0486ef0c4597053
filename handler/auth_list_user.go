package handler

// AUTH_LIST_USER (3005), AdminBrokerProcessor.listUser; sent by mqadmin
// listUser.
//
// Header (ListUsersRequestHeader.java): filter (optional): only users
// whose name contains it.
//
// Behaviour: a JSON array of UserInfo sorted by username; no body when no
// user matches.
//
// Response codes: SUCCESS (0).

import (
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleAuthListUser(c remoting.Conn, req *codec.Command) {
	users := b.Auth.ListUsers(req.ExtFields["filter"])
	authJSON(c, req, users, len(users) == 0)
}
