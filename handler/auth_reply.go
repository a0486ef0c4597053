package handler

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/popshim/popshim/auth"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

// authStarted answers an AUTH_* admin request whose change could not be
// queued: a refusal (*auth.Error) is NO_PERMISSION (16) with RocketMQ's
// message (AdminBrokerProcessor.handleAuthException), a normal user asking
// for a super user is SYSTEM_ERROR (1) with Java's remark, a writer
// refusal as every write (reply.SubmitError). Any goroutine.
func authStarted(c remoting.Conn, req *codec.Command, err error) {
	var super auth.ErrSuperOnly
	switch {
	case auth.IsDenied(err):
		reply.Code(c, req, codec.NoPermission, err.Error())
	case errors.As(err, &super):
		reply.Code(c, req, codec.SystemError, err.Error())
	default:
		reply.SubmitError(c, req, err)
	}
}

// authDone is the Done of an AUTH_* change: SUCCESS once durable, the
// refusal as NO_PERMISSION, a failed write as SYSTEM_ERROR. Writer's
// completer goroutine.
func authDone(c remoting.Conn, req *codec.Command) func(error) {
	return func(err error) {
		if err != nil && auth.IsDenied(err) {
			reply.Code(c, req, codec.NoPermission, err.Error())
			return
		}
		reply.Done(c, req, err)
	}
}

// authJSON answers SUCCESS with v as JSON body, or with no body when
// empty is true (RocketMQ sets no body for a missing user or ACL or an
// empty list).
func authJSON(c remoting.Conn, req *codec.Command, v any, empty bool) {
	resp := codec.NewResponse(req, codec.Success, "")
	if !empty {
		body, err := json.Marshal(v)
		if err != nil {
			reply.Code(c, req, codec.SystemError, "encode answer: "+err.Error())
			return
		}
		resp.Body = body
	}
	reply.Respond(c, req, resp)
}

// decodeAuthBody reads a JSON body into v; an unreadable body is
// SYSTEM_ERROR (1), as RocketMQ's decode exception is.
func decodeAuthBody(c remoting.Conn, req *codec.Command, v any) bool {
	if len(req.Body) == 0 {
		return true
	}
	if err := json.Unmarshal(req.Body, v); err != nil {
		reply.Code(c, req, codec.SystemError, "invalid body: "+err.Error())
		return false
	}
	return true
}

// decodeUserRequest reads the username header and the UserInfo body of
// AUTH_CREATE_USER and AUTH_UPDATE_USER (CreateUserRequestHeader.java,
// UpdateUserRequestHeader.java): a blank username is INVALID_PARAMETER
// (29) "The username is blank", a bad body SYSTEM_ERROR (1); ok=false
// means the answer was sent. Event loop.
func decodeUserRequest(c remoting.Conn, req *codec.Command) (u auth.User, ok bool) {
	name := req.ExtFields["username"]
	if strings.TrimSpace(name) == "" {
		reply.Code(c, req, codec.InvalidParameter, "The username is blank")
		return u, false
	}
	if !decodeAuthBody(c, req, &u) {
		return u, false
	}
	u.Username = name
	return u, true
}
