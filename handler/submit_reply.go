package handler

import (
	"errors"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/remoting"
)

// isWriterErr reports whether err came from batch.Writer.Submit (lane full,
// writer closed, or sticky failure) rather than from validation.
func isWriterErr(err error) bool {
	return errors.Is(err, batch.ErrBusy) || errors.Is(err, batch.ErrClosed) || errors.Is(err, batch.ErrFailed)
}

// respondSubmitError answers a request whose write was refused by the
// writer: SYSTEM_BUSY (2) with the flow-control remark when the lane was
// full, GO_AWAY (1500; SYSTEM_BUSY for clients at or below V5_3_1) when the
// writer is closed for shutdown, SYSTEM_ERROR (1) with the cause otherwise
// (submitCode). Any goroutine.
func respondSubmitError(c remoting.Conn, req *codec.Command, err error) {
	respondCode(c, req, submitCode(err), submitRemark("", err))
}

// shutdownRemark starts the remark of a request refused because the stack
// is shutting down.
const shutdownRemark = "broker is shutting down, request not executed"

// respondDone answers SUCCESS when a durable write finished (err nil), else
// SYSTEM_ERROR naming the cause. For batch.Op.Done callbacks.
func respondDone(c remoting.Conn, req *codec.Command, err error) {
	if err != nil {
		respondCode(c, req, codec.SystemError, "write failed: "+err.Error())
		return
	}
	respondCode(c, req, codec.Success, "")
}

// submitRemark is the remark of a request whose op Submit refused:
// busyRemark for a full lane; otherwise what failed (omitted when "") and
// the writer's error, prefixed with shutdownRemark when the writer is
// closed for shutdown.
func submitRemark(what string, err error) string {
	remark := err.Error()
	if what != "" {
		remark = what + ": " + remark
	}
	switch {
	case isBusy(err):
		return busyRemark
	case errors.Is(err, batch.ErrClosed):
		return shutdownRemark + ": " + remark
	}
	return remark
}
