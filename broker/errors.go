package broker

import (
	"errors"
	"fmt"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/codec"
)

// Error is an operation's refusal or failure: the RocketMQ response code
// (codec's response-code constants, common/.../protocol/ResponseCode.java)
// and the remark a Java broker gives for it. Operations hand *Error to
// their completion callback; adapters read Code and Remark.
type Error struct {
	Code   int32  // RocketMQ response code, never codec.Success
	Remark string // human-readable reason, sent as the response remark
}

// Error returns the remark with its code.
func (e *Error) Error() string { return fmt.Sprintf("code %d: %s", e.Code, e.Remark) }

// Errorf returns an *Error with code and a formatted remark.
func Errorf(code int32, format string, args ...any) *Error {
	return &Error{Code: code, Remark: fmt.Sprintf(format, args...)}
}

// BusyRemark is the remark of a SYSTEM_BUSY answer caused by a full writer
// lane or reader queue, worded like the Java broker's flow-control remarks.
const BusyRemark = "[OVERLOAD]system busy, start flow control for a while"

// ShutdownRemark starts the remark of a request refused because the stack
// is shutting down.
const ShutdownRemark = "broker is shutting down, request not executed"

// errBusy is the refusal of a request whose reader queue is full.
var errBusy = &Error{Code: codec.SystemBusy, Remark: BusyRemark}

// ErrorOf maps err to an *Error: an *Error (wrapped or not) as it is; a
// batch.Writer Submit refusal as SubmitError; popstore.ErrBadName as
// MESSAGE_ILLEGAL (13); anything else as SYSTEM_ERROR (1) naming the cause.
// nil gives nil.
func ErrorOf(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if IsWriterErr(err) {
		return SubmitError("", err)
	}
	return &Error{Code: WriteErrorCode(err), Remark: err.Error()}
}

// IsWriterErr reports whether err came from batch.Writer.Submit (lane full,
// writer closed, or sticky failure) rather than from validation.
func IsWriterErr(err error) bool {
	return errors.Is(err, batch.ErrBusy) || errors.Is(err, batch.ErrClosed) || errors.Is(err, batch.ErrFailed)
}

// SubmitError is the refusal of a request whose op batch.Writer.Submit
// refused (nothing was queued): ErrBusy → SYSTEM_BUSY (2) with BusyRemark,
// at once, as a Java broker's full executor; ErrClosed (shutting down) →
// GO_AWAY (1500), which the remoting layer sends as SYSTEM_BUSY to clients
// at or below V5_3_1; anything else (sticky failure) → SYSTEM_ERROR (1).
// what names the operation in the remark ("" for none).
func SubmitError(what string, err error) *Error {
	remark := err.Error()
	if what != "" {
		remark = what + ": " + remark
	}
	switch {
	case errors.Is(err, batch.ErrBusy):
		return &Error{Code: codec.SystemBusy, Remark: BusyRemark}
	case errors.Is(err, batch.ErrClosed):
		return &Error{Code: codec.GoAway, Remark: ShutdownRemark + ": " + remark}
	}
	return &Error{Code: codec.SystemError, Remark: remark}
}

// writeFailed is the failure of an op whose synced write failed after it
// was queued: WriteErrorCode's code and "<what> failed: <cause>".
func writeFailed(what string, err error) *Error {
	return &Error{Code: WriteErrorCode(err), Remark: what + " failed: " + err.Error()}
}
