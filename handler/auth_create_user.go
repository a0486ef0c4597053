package handler

// AUTH_CREATE_USER (3001), AdminBrokerProcessor.createUser; sent by
// mqadmin createUser.
//
// Header (CreateUserRequestHeader.java): username. Body: UserInfo JSON
// (password, userType "Super"/"Normal", userStatus "enable"/"disable").
//
// Behaviour: the user is stored durably (RocksDB meta family) and the
// reply sent after fsync; it can sign requests from then on. Type defaults
// to Normal, status to enable.
//
// Response codes: SUCCESS (0); INVALID_PARAMETER (29) "The username is
// blank"; NO_PERMISSION (16) "password can not be blank" or "The user is
// existed"; SYSTEM_ERROR (1) when a normal user creates a super user or
// the write fails; SYSTEM_BUSY (2).

import (
	"github.com/popshim/popshim/auth"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleAuthCreateUser(c remoting.Conn, req *codec.Command) {
	u, ok := decodeUserRequest(c, req)
	if !ok {
		return
	}
	if err := b.Auth.CreateUser(u, req.ExtFields[auth.FieldAccessKey], authDone(c, req)); err != nil {
		authStarted(c, req, err)
	}
}
