package handler

// AUTH_UPDATE_USER (3002), AdminBrokerProcessor.updateUser; sent by
// mqadmin updateUser.
//
// Header (UpdateUserRequestHeader.java): username. Body: UserInfo JSON;
// blank fields keep their stored value.
//
// Behaviour: the changed user is stored durably, the reply sent after
// fsync; the new password signs requests from then on.
//
// Response codes: SUCCESS (0); INVALID_PARAMETER (29) "The username is
// blank"; NO_PERMISSION (16) "The user is not exist" or "The super user
// can only be update by super user"; SYSTEM_ERROR (1) when a normal user
// makes a super user or the write fails; SYSTEM_BUSY (2).

import (
	"github.com/popshim/popshim/auth"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleAuthUpdateUser(c remoting.Conn, req *codec.Command) {
	u, ok := decodeUserRequest(c, req)
	if !ok {
		return
	}
	if err := b.Auth.UpdateUser(u, req.ExtFields[auth.FieldAccessKey], authDone(c, req)); err != nil {
		authStarted(c, req, err)
	}
}
