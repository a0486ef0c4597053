package grpcserver

import (
	"context"
	"errors"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/popshim/popshim/codec"
)

// Op names the RPC whose outcome a remoting response code describes: a few
// codes mean different things per RPC (PULL_NOT_FOUND is an empty receive,
// FLUSH_DISK_TIMEOUT only exists for sends, any failed ACK is reported the
// same way by the proxy).
type Op uint8

// RPCs with their own mapping rules.
const (
	OpGeneric         Op = iota // QueryRoute, Heartbeat, QueryAssignment, anything else
	OpSend                      // SendMessage (one entry per message)
	OpReceive                   // ReceiveMessage (the stream's Status item)
	OpAck                       // AckMessage (one entry per receipt handle)
	OpChangeInvisible           // ChangeInvisibleDuration
	OpForwardDLQ                // ForwardMessageToDeadLetterQueue
	OpEndTransaction            // EndTransaction
	OpRecall                    // RecallMessage
)

// StatusMapping is one row of the response-code table: the remoting
// response code (codec/response_codes.go) and the v2.Code the endpoint
// answers for it. Proxy is what rocketmq-proxy 5.3 answers for the same
// broker code (proxy/src/main/java/org/apache/rocketmq/proxy/grpc/v2/common/ResponseBuilder.java:
// SUCCESS, SYSTEM_BUSY, REQUEST_CODE_NOT_SUPPORTED and
// SUBSCRIPTION_GROUP_NOT_EXIST are mapped there, every other broker code
// becomes INTERNAL_SERVER_ERROR); where popshim differs, Why says why.
type StatusMapping struct {
	Remoting int32
	Code     v2.Code
	Proxy    v2.Code
	Why      string
}

// statusTable is the generic mapping (OpGeneric); opStatus applies the
// per-RPC rules on top. Codes not listed map to INTERNAL_SERVER_ERROR, as
// in the proxy. The v2 codes each RPC may return are listed in
// rocketmq-apis StatusCode.md.
var statusTable = []StatusMapping{
	{codec.Success, v2.Code_OK, v2.Code_OK, ""},
	{codec.SystemError, v2.Code_INTERNAL_SERVER_ERROR, v2.Code_INTERNAL_SERVER_ERROR, ""},
	{codec.SystemBusy, v2.Code_TOO_MANY_REQUESTS, v2.Code_TOO_MANY_REQUESTS, ""},
	{codec.RequestCodeNotSupported, v2.Code_NOT_IMPLEMENTED, v2.Code_NOT_IMPLEMENTED, ""},
	// The three "stored, but" send outcomes (SendMessageActivity maps the
	// client's SendStatus; MQClientAPIImpl turns codes 10-12 into it).
	{codec.FlushDiskTimeout, v2.Code_MASTER_PERSISTENCE_TIMEOUT, v2.Code_MASTER_PERSISTENCE_TIMEOUT, ""},
	{codec.SlaveNotAvailable, v2.Code_HA_NOT_AVAILABLE, v2.Code_HA_NOT_AVAILABLE, ""},
	{codec.FlushSlaveTimeout, v2.Code_SLAVE_PERSISTENCE_TIMEOUT, v2.Code_SLAVE_PERSISTENCE_TIMEOUT, ""},
	{codec.MessageIllegal, v2.Code_BAD_REQUEST, v2.Code_INTERNAL_SERVER_ERROR,
		"the proxy rejects bad messages itself with an ILLEGAL_* code before the broker sees them; a refusal left to the core is the client's fault, not the server's"},
	{codec.VersionNotSupported, v2.Code_VERSION_UNSUPPORTED, v2.Code_INTERNAL_SERVER_ERROR, "same meaning"},
	{codec.NoPermission, v2.Code_FORBIDDEN, v2.Code_INTERNAL_SERVER_ERROR,
		"topic or group not writable/readable, or a forbidden system topic: FORBIDDEN is the v2 code for it (StatusCode.md lists it for SendMessage, QueryAssignment, ReceiveMessage); authentication failures are mapped by StatusOfAuth"},
	{codec.TopicNotExist, v2.Code_TOPIC_NOT_FOUND, v2.Code_TOPIC_NOT_FOUND, "TopicRouteHelper.isTopicNotExistError"},
	{codec.PullNotFound, v2.Code_MESSAGE_NOT_FOUND, v2.Code_MESSAGE_NOT_FOUND, "ReceiveMessageResponseStreamWriter: no new message"},
	{codec.PullRetryImmediately, v2.Code_MESSAGE_NOT_FOUND, v2.Code_MESSAGE_NOT_FOUND, "nothing matched the filter"},
	{codec.SubscriptionGroupNotExist, v2.Code_CONSUMER_GROUP_NOT_FOUND, v2.Code_CONSUMER_GROUP_NOT_FOUND, ""},
	{codec.InvalidParameter, v2.Code_BAD_REQUEST, v2.Code_INTERNAL_SERVER_ERROR, "as MESSAGE_ILLEGAL"},
	{codec.PollingFull, v2.Code_TOO_MANY_REQUESTS, v2.Code_TOO_MANY_REQUESTS, "ReceiveMessageResponseStreamWriter: polling full"},
	{codec.PollingTimeout, v2.Code_MESSAGE_NOT_FOUND, v2.Code_MESSAGE_NOT_FOUND, "ReceiveMessageResponseStreamWriter: no new message"},
	{codec.FlowControl, v2.Code_TOO_MANY_REQUESTS, v2.Code_INTERNAL_SERVER_ERROR, "flow control is what TOO_MANY_REQUESTS means; clients back off on it"},
	{codec.IllegalOperation, v2.Code_BAD_REQUEST, v2.Code_INTERNAL_SERVER_ERROR,
		"a recall handle the broker refuses, or an EndTransaction not from a check after the half's CHECK_IMMUNITY_TIME_IN_SECONDS: the request is at fault (the proxy sends END_TRANSACTION oneway and never sees that refusal)"},
}

var statusIndex = func() map[int32]StatusMapping {
	m := make(map[int32]StatusMapping, len(statusTable))
	for _, e := range statusTable {
		m[e.Remoting] = e
	}
	return m
}()

// StatusTable returns a copy of the generic mapping table in the order
// above. For documentation and tests.
func StatusTable() []StatusMapping { return append([]StatusMapping(nil), statusTable...) }

// Messages the proxy puts into fixed-text statuses.
const (
	msgNoNewMessage   = "no new message"
	msgPollingFull    = "polling full"
	msgAckFailed      = "ack failed: status is abnormal"
	msgChangeFailed   = "changeInvisibleDuration failed: status is abnormal"
	msgInternalPrefix = "internal error: "
)

// CodeOf returns the v2 code for a remoting response code answered to op.
// Per-RPC rules, after the proxy:
//   - OpReceive: PULL_NOT_FOUND, PULL_RETRY_IMMEDIATELY and POLLING_TIMEOUT
//     are MESSAGE_NOT_FOUND, POLLING_FULL is TOO_MANY_REQUESTS.
//   - OpAck and OpChangeInvisible: any failure other than SYSTEM_BUSY and
//     FLOW_CONTROL is INTERNAL_SERVER_ERROR ("status is abnormal": the
//     client API turns every non-SUCCESS ACK into AckStatus.NO_EXIST).
//   - elsewhere the generic table; unknown codes INTERNAL_SERVER_ERROR.
//
// Safe for concurrent use.
func CodeOf(op Op, remoting int32) v2.Code {
	if remoting == codec.Success {
		return v2.Code_OK
	}
	e, ok := statusIndex[remoting]
	code := v2.Code_INTERNAL_SERVER_ERROR
	if ok {
		code = e.Code
	}
	switch op {
	case OpAck, OpChangeInvisible:
		if code != v2.Code_TOO_MANY_REQUESTS {
			return v2.Code_INTERNAL_SERVER_ERROR
		}
	case OpReceive:
		// Table rows already give MESSAGE_NOT_FOUND / TOO_MANY_REQUESTS.
	case OpSend, OpForwardDLQ, OpEndTransaction, OpRecall, OpGeneric:
		if code == v2.Code_MESSAGE_NOT_FOUND {
			// Only a receive can find nothing.
			return v2.Code_INTERNAL_SERVER_ERROR
		}
	}
	return code
}

// StatusOf returns the Status the endpoint answers for a remoting response
// code and remark from the core. The message is the remark, or the
// proxy's fixed text where the proxy uses one (receive "no new message" /
// "polling full", "ack failed: status is abnormal", ...) followed by the
// remark, or the code name when there is no remark. Safe for concurrent use.
func StatusOf(op Op, remoting int32, remark string) *v2.Status {
	code := CodeOf(op, remoting)
	msg := remark
	switch {
	case code == v2.Code_OK:
		msg = v2.Code_OK.String()
	case op == OpReceive && code == v2.Code_MESSAGE_NOT_FOUND:
		msg = msgNoNewMessage
	case op == OpReceive && code == v2.Code_TOO_MANY_REQUESTS:
		msg = msgPollingFull
	case op == OpAck && code == v2.Code_INTERNAL_SERVER_ERROR:
		msg = withRemark(msgAckFailed, remoting, remark)
	case op == OpChangeInvisible && code == v2.Code_INTERNAL_SERVER_ERROR:
		msg = withRemark(msgChangeFailed, remoting, remark)
	case msg == "":
		msg = codec.ResponseName(remoting)
	}
	return &v2.Status{Code: code, Message: msg}
}

func withRemark(fixed string, remoting int32, remark string) string {
	s := fixed + " (" + codec.ResponseName(remoting)
	if remark != "" {
		s += ": " + remark
	}
	return s + ")"
}

// NewStatus builds a Status; an empty message becomes the code's name, as
// the proxy's ResponseBuilder.buildStatus does.
func NewStatus(code v2.Code, message string) *v2.Status {
	if message == "" {
		message = code.String()
	}
	return &v2.Status{Code: code, Message: message}
}

// StatusOK is a fresh OK status with message "OK".
func StatusOK() *v2.Status { return NewStatus(v2.Code_OK, "") }

// StatusOfError maps an error that is not a remoting response (the core
// could not answer) to a Status: a context deadline is PROXY_TIMEOUT (the
// proxy's RemotingTimeoutException), a cancelled context is
// INTERNAL_SERVER_ERROR naming the cancellation, a *codec.ResponseError is
// mapped like StatusOf, an invalid receipt handle (codec.ErrBadExtraInfo,
// codec.ErrForeignReceipt) is INVALID_RECEIPT_HANDLE, anything else
// INTERNAL_SERVER_ERROR with the error text.
//
// Where the proxy differs: it answers INTERNAL_SERVER_ERROR for a handle
// that does not parse; INVALID_RECEIPT_HANDLE is what makes push consumers
// stop retrying an ACK that can never succeed (grpc-v5 reference §3.6).
func StatusOfError(op Op, err error) *v2.Status {
	var re *codec.ResponseError
	switch {
	case err == nil:
		return StatusOK()
	case errors.As(err, &re):
		return StatusOf(op, re.Code, re.Remark)
	case errors.Is(err, codec.ErrBadExtraInfo), errors.Is(err, codec.ErrForeignReceipt):
		return NewStatus(v2.Code_INVALID_RECEIPT_HANDLE, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return NewStatus(v2.Code_PROXY_TIMEOUT, err.Error())
	}
	return NewStatus(v2.Code_INTERNAL_SERVER_ERROR, msgInternalPrefix+err.Error())
}

// StatusOfAuth is the Status of a failed authentication or authorization
// check: UNAUTHORIZED with the reason, as the proxy answers its
// AuthenticationException and AuthorizationException.
func StatusOfAuth(reason string) *v2.Status { return NewStatus(v2.Code_UNAUTHORIZED, reason) }
