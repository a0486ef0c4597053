package reply

import (
	"errors"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/remoting"
)

// IsWriterErr reports whether err came from batch.Writer.Submit (lane full,
// writer closed, or sticky failure) rather than from validation.
func IsWriterErr(err error) bool {
	return errors.Is(err, batch.ErrBusy) || errors.Is(err, batch.ErrClosed) || errors.Is(err, batch.ErrFailed)
}

// SubmitError answers a request whose write was refused by the
// writer: SYSTEM_BUSY (2) with the flow-control remark when the lane was
// full, GO_AWAY (1500; SYSTEM_BUSY for clients at or below V5_3_1) when the
// writer is closed for shutdown, SYSTEM_ERROR (1) with the cause otherwise
// (submitCode). Any goroutine.
func SubmitError(c remoting.Conn, req *codec.Command, err error) {
	Code(c, req, SubmitCode(err), SubmitRemark("", err))
}

// ShutdownRemark starts the remark of a request refused because the stack
// is shutting down.
const ShutdownRemark = "broker is shutting down, request not executed"

// Done answers SUCCESS when a durable write finished (err nil), else
// SYSTEM_ERROR naming the cause. For batch.Op.Done callbacks.
func Done(c remoting.Conn, req *codec.Command, err error) {
	if err != nil {
		Code(c, req, codec.SystemError, "write failed: "+err.Error())
		return
	}
	Code(c, req, codec.Success, "")
}

// SubmitRemark is the remark of a request whose op Submit refused:
// BusyRemark for a full lane; otherwise what failed (omitted when "") and
// the writer's error, prefixed with shutdownRemark when the writer is
// closed for shutdown.
func SubmitRemark(what string, err error) string {
	remark := err.Error()
	if what != "" {
		remark = what + ": " + remark
	}
	switch {
	case IsBusy(err):
		return BusyRemark
	case errors.Is(err, batch.ErrClosed):
		return ShutdownRemark + ": " + remark
	}
	return remark
}
