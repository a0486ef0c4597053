package handler

// AUTH_DELETE_USER (3003), AdminBrokerProcessor.deleteUser; sent by
// mqadmin deleteUser.
//
// Header (DeleteUserRequestHeader.java): username.
//
// Behaviour: the user and its ACL are removed durably, the reply sent
// after fsync. A missing user is SUCCESS.
//
// Response codes: SUCCESS (0); NO_PERMISSION (16) "username can not be
// blank" or, for a super user deleted by a normal user, "The super user
// can only be update by super user"; SYSTEM_ERROR (1) when the write
// fails; SYSTEM_BUSY (2).

import (
	"github.com/popshim/popshim/auth"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleAuthDeleteUser(c remoting.Conn, req *codec.Command) {
	if err := b.Auth.DeleteUser(req.ExtFields["username"], req.ExtFields[auth.FieldAccessKey], authDone(c, req)); err != nil {
		authStarted(c, req, err)
	}
}
