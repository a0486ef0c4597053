package reply

import (
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/remoting"
)

// IsWriterErr reports whether err came from batch.Writer.Submit (lane full,
// writer closed, or sticky failure) rather than from validation
// (broker.IsWriterErr).
func IsWriterErr(err error) bool { return broker.IsWriterErr(err) }

// SubmitError answers a request whose write was refused by the writer with
// broker.SubmitError's code and remark: SYSTEM_BUSY (2) when the lane was
// full, GO_AWAY (1500; SYSTEM_BUSY for clients at or below V5_3_1) when
// the writer is closed for shutdown, SYSTEM_ERROR (1) otherwise. Any
// goroutine.
func SubmitError(c remoting.Conn, req *codec.Command, err error) {
	Err(c, req, broker.SubmitError("", err))
}

// ShutdownRemark is broker.ShutdownRemark.
const ShutdownRemark = broker.ShutdownRemark

// Err answers req with the response code and remark of an operation's
// error (broker.ErrorOf: an *broker.Error as it is, writer refusals as
// broker.SubmitError, anything else SYSTEM_ERROR). Any goroutine.
func Err(c remoting.Conn, req *codec.Command, err error) {
	e := broker.ErrorOf(err)
	Code(c, req, e.Code, e.Remark)
}

// Done answers SUCCESS when a durable write finished (err nil), else
// SYSTEM_ERROR naming the cause. For batch.Op.Done callbacks.
func Done(c remoting.Conn, req *codec.Command, err error) {
	if err != nil {
		Code(c, req, codec.SystemError, "write failed: "+err.Error())
		return
	}
	Code(c, req, codec.Success, "")
}

// SubmitRemark is broker.SubmitError's remark for what and err.
func SubmitRemark(what string, err error) string { return broker.SubmitError(what, err).Remark }
