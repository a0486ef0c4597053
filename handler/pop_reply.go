package handler

import (
	"errors"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/remoting"
)

// respond sends resp on c unless req was oneway. Any goroutine. A closed
// connection drops the frame (the client is gone; nothing to do).
func respond(c remoting.Conn, req, resp *codec.Command) {
	if req.IsOneway() {
		return
	}
	_ = c.Reply(resp)
}

// respondCode answers req with a bare response code and remark.
func respondCode(c remoting.Conn, req *codec.Command, code int32, remark string) {
	respond(c, req, codec.NewResponse(req, code, remark))
}

// respondHeaderError answers a request whose header could not be decoded
// the way the Java broker's remoting layer does for a
// RemotingCommandException: SYSTEM_ERROR (1), the remark naming the field.
func respondHeaderError(c remoting.Conn, req *codec.Command, err error) {
	respondCode(c, req, codec.SystemError, err.Error())
}

// submitCode maps a batch.Writer Submit error (nothing was queued) to the
// response code: ErrBusy → SYSTEM_BUSY (2) at once, as a Java broker's full
// executor; ErrClosed (the stack is shutting down, nothing was done) →
// GO_AWAY (1500), which the remoting layer sends as SYSTEM_BUSY (2) to
// clients at or below V5_3_1 (remoting.SupportsGoAway); anything else
// (sticky failure) → SYSTEM_ERROR (1).
func submitCode(err error) int32 {
	switch {
	case isBusy(err):
		return codec.SystemBusy
	case errors.Is(err, batch.ErrClosed):
		return codec.GoAway
	}
	return codec.SystemError
}
