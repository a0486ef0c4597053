package reply

import (
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/remoting"
)

// Respond sends resp on c unless req was oneway. Any goroutine. A closed
// connection drops the frame (the client is gone; nothing to do).
func Respond(c remoting.Conn, req, resp *codec.Command) {
	if req.IsOneway() {
		return
	}
	_ = c.Reply(resp)
}

// Code answers req with a bare response code and remark.
func Code(c remoting.Conn, req *codec.Command, code int32, remark string) {
	Respond(c, req, codec.NewResponse(req, code, remark))
}

// HeaderError answers a request whose header could not be decoded
// the way the Java broker's remoting layer does for a
// RemotingCommandException: SYSTEM_ERROR (1), the remark naming the field.
func HeaderError(c remoting.Conn, req *codec.Command, err error) {
	Code(c, req, codec.SystemError, err.Error())
}

// SubmitCode is broker.SubmitError's code for a Submit refusal err.
func SubmitCode(err error) int32 { return broker.SubmitError("", err).Code }
