package handler

// AUTH_GET_USER (3004), AdminBrokerProcessor.getUser; sent by mqadmin
// getUser.
//
// Header (GetUserRequestHeader.java): username.
//
// Behaviour: the user as UserInfo JSON (username, password, userType,
// userStatus), as RocketMQ answers it; no body when the user is unknown.
//
// Response codes: SUCCESS (0); INVALID_PARAMETER (29) "The username is
// blank".

import (
	"strings"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleAuthGetUser(c remoting.Conn, req *codec.Command) {
	name := req.ExtFields["username"]
	if strings.TrimSpace(name) == "" {
		reply.Code(c, req, codec.InvalidParameter, "The username is blank")
		return
	}
	u, ok := b.Auth.GetUser(name)
	authJSON(c, req, u, !ok)
}
