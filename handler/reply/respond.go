package reply

import (
	"errors"

	"github.com/popshim/popshim/batch"
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

// SubmitCode maps a batch.Writer Submit error (nothing was queued) to the
// response code: ErrBusy → SYSTEM_BUSY (2) at once, as a Java broker's full
// executor; ErrClosed (the stack is shutting down, nothing was done) →
// GO_AWAY (1500), which the remoting layer sends as SYSTEM_BUSY (2) to
// clients at or below V5_3_1 (remoting.SupportsGoAway); anything else
// (sticky failure) → SYSTEM_ERROR (1).
func SubmitCode(err error) int32 {
	switch {
	case IsBusy(err):
		return codec.SystemBusy
	case errors.Is(err, batch.ErrClosed):
		return codec.GoAway
	}
	return codec.SystemError
}
