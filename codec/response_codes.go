package codec

import (
	"strconv"
)

// Response codes carried in Command.Code of a response: system codes from
// remoting/src/main/java/org/apache/rocketmq/remoting/protocol/RemotingSysResponseCode.java
// and business codes from .../protocol/ResponseCode.java. The Go client
// defines only 0, 1, 10, 11, 12, 14, 16, 17, 19, 20, 21 and 22.
const (
	// Success (0): the request was carried out.
	Success int32 = 0
	// SystemError (1): unexpected failure; also what Java answers for a header
	// that failed to decode (a required field missing or unparsable).
	SystemError int32 = 1
	// SystemBusy (2): flow control; answered at once when a queue is full.
	SystemBusy int32 = 2
	// RequestCodeNotSupported (3): no handler for the request code.
	RequestCodeNotSupported int32 = 3
	// TransactionFailed (4).
	TransactionFailed int32 = 4
	// FlushDiskTimeout (10): stored, but sync flush timed out (clients treat it as a send result).
	FlushDiskTimeout int32 = 10
	// SlaveNotAvailable (11): stored, no slave (send result).
	SlaveNotAvailable int32 = 11
	// FlushSlaveTimeout (12): stored, slave sync timed out (send result).
	FlushSlaveTimeout int32 = 12
	// MessageIllegal (13): bad message, or queueId out of range on ACK / CHANGE_INVISIBLE.
	MessageIllegal int32 = 13
	// ServiceNotAvailable (14): store unavailable or disk full.
	ServiceNotAvailable int32 = 14
	// VersionNotSupported (15).
	VersionNotSupported int32 = 15
	// NoPermission (16): broker, topic or group not readable/writable.
	NoPermission int32 = 16
	// TopicNotExist (17).
	TopicNotExist int32 = 17
	// TopicExistAlready (18).
	TopicExistAlready int32 = 18
	// PullNotFound (19): no new message; also "not found" for the Java POP client.
	PullNotFound int32 = 19
	// PullRetryImmediately (20): messages existed but none matched the filter.
	PullRetryImmediately int32 = 20
	// PullOffsetMoved (21): illegal offset; nextBeginOffset carries the corrected one.
	PullOffsetMoved int32 = 21
	// QueryNotFound (22): QUERY_CONSUMER_OFFSET found no stored offset.
	QueryNotFound int32 = 22
	// SubscriptionParseFailed (23).
	SubscriptionParseFailed int32 = 23
	// SubscriptionNotExist (24).
	SubscriptionNotExist int32 = 24
	// SubscriptionNotLatest (25).
	SubscriptionNotLatest int32 = 25
	// SubscriptionGroupNotExist (26).
	SubscriptionGroupNotExist int32 = 26
	// FilterDataNotExist (27).
	FilterDataNotExist int32 = 27
	// FilterDataNotLatest (28).
	FilterDataNotLatest int32 = 28
	// InvalidParameter (29): e.g. POP maxMsgNums > 32, queueId out of range on POP / NOTIFICATION.
	InvalidParameter int32 = 29
	// TransactionShouldCommit (200).
	TransactionShouldCommit int32 = 200
	// TransactionShouldRollback (201).
	TransactionShouldRollback int32 = 201
	// TransactionStateUnknow (202), spelt as in Java.
	TransactionStateUnknow int32 = 202
	// TransactionStateGroupWrong (203).
	TransactionStateGroupWrong int32 = 203
	// NoBuyerID (204).
	NoBuyerID int32 = 204
	// NotInCurrentUnit (205).
	NotInCurrentUnit int32 = 205
	// ConsumerNotOnline (206).
	ConsumerNotOnline int32 = 206
	// ConsumeMsgTimeout (207).
	ConsumeMsgTimeout int32 = 207
	// NoMessage (208): ACK / CHANGE_INVISIBLE offset outside the queue range; empty BATCH_ACK body.
	NoMessage int32 = 208
	// PollingFull (209): too many suspended POP requests.
	PollingFull int32 = 209
	// PollingTimeout (210): POP long poll expired without messages.
	PollingTimeout int32 = 210
	// BrokerNotExist (211).
	BrokerNotExist int32 = 211
	// BrokerDispatchNotComplete (212).
	BrokerDispatchNotComplete int32 = 212
	// BroadcastConsumption (213).
	BroadcastConsumption int32 = 213
	// FlowControl (215).
	FlowControl int32 = 215
	// NotLeaderForQueue (501): static-topic logical queue not on this broker.
	NotLeaderForQueue int32 = 501
	// IllegalOperation (604).
	IllegalOperation int32 = 604
	// GoAway (1500): server shutting down; only for requests with version > V5_3_1.
	GoAway int32 = 1500
)

// ResponseCodeInfo describes one response code of the wire-code table.
// Retriable is true when a RocketMQ client retries the same request (on this
// or another broker) after receiving the code, or when the condition is
// transient so that a retry may succeed: the Java producer's
// retryResponseCodes (17, 14, 1, 2, 16, 204, 205, 1500) plus the long-poll
// outcomes and flow-control codes.
type ResponseCodeInfo struct {
	Code      int32
	Name      string
	Retriable bool
}

var responseTable = []ResponseCodeInfo{
	{Success, "SUCCESS", false},
	{SystemError, "SYSTEM_ERROR", true},
	{SystemBusy, "SYSTEM_BUSY", true},
	{RequestCodeNotSupported, "REQUEST_CODE_NOT_SUPPORTED", false},
	{TransactionFailed, "TRANSACTION_FAILED", false},
	{FlushDiskTimeout, "FLUSH_DISK_TIMEOUT", false},
	{SlaveNotAvailable, "SLAVE_NOT_AVAILABLE", false},
	{FlushSlaveTimeout, "FLUSH_SLAVE_TIMEOUT", false},
	{MessageIllegal, "MESSAGE_ILLEGAL", false},
	{ServiceNotAvailable, "SERVICE_NOT_AVAILABLE", true},
	{VersionNotSupported, "VERSION_NOT_SUPPORTED", false},
	{NoPermission, "NO_PERMISSION", true},
	{TopicNotExist, "TOPIC_NOT_EXIST", true},
	{TopicExistAlready, "TOPIC_EXIST_ALREADY", false},
	{PullNotFound, "PULL_NOT_FOUND", true},
	{PullRetryImmediately, "PULL_RETRY_IMMEDIATELY", true},
	{PullOffsetMoved, "PULL_OFFSET_MOVED", false},
	{QueryNotFound, "QUERY_NOT_FOUND", false},
	{SubscriptionParseFailed, "SUBSCRIPTION_PARSE_FAILED", false},
	{SubscriptionNotExist, "SUBSCRIPTION_NOT_EXIST", false},
	{SubscriptionNotLatest, "SUBSCRIPTION_NOT_LATEST", false},
	{SubscriptionGroupNotExist, "SUBSCRIPTION_GROUP_NOT_EXIST", false},
	{FilterDataNotExist, "FILTER_DATA_NOT_EXIST", false},
	{FilterDataNotLatest, "FILTER_DATA_NOT_LATEST", false},
	{InvalidParameter, "INVALID_PARAMETER", false},
	{TransactionShouldCommit, "TRANSACTION_SHOULD_COMMIT", false},
	{TransactionShouldRollback, "TRANSACTION_SHOULD_ROLLBACK", false},
	{TransactionStateUnknow, "TRANSACTION_STATE_UNKNOW", false},
	{TransactionStateGroupWrong, "TRANSACTION_STATE_GROUP_WRONG", false},
	{NoBuyerID, "NO_BUYER_ID", true},
	{NotInCurrentUnit, "NOT_IN_CURRENT_UNIT", true},
	{ConsumerNotOnline, "CONSUMER_NOT_ONLINE", false},
	{ConsumeMsgTimeout, "CONSUME_MSG_TIMEOUT", false},
	{NoMessage, "NO_MESSAGE", false},
	{PollingFull, "POLLING_FULL", true},
	{PollingTimeout, "POLLING_TIMEOUT", true},
	{BrokerNotExist, "BROKER_NOT_EXIST", false},
	{BrokerDispatchNotComplete, "BROKER_DISPATCH_NOT_COMPLETE", true},
	{BroadcastConsumption, "BROADCAST_CONSUMPTION", false},
	{FlowControl, "FLOW_CONTROL", true},
	{NotLeaderForQueue, "NOT_LEADER_FOR_QUEUE", true},
	{IllegalOperation, "ILLEGAL_OPERATION", false},
	{GoAway, "GO_AWAY", true},
}

var responseIndex = func() map[int32]ResponseCodeInfo {
	m := make(map[int32]ResponseCodeInfo, len(responseTable))
	for _, e := range responseTable {
		m[e.Code] = e
	}
	return m
}()

// LookupResponseCode returns the table entry of code and whether the code
// is known. Safe for concurrent use.
func LookupResponseCode(code int32) (ResponseCodeInfo, bool) {
	e, ok := responseIndex[code]
	return e, ok
}

// ResponseName returns the Java constant name of a response code, or
// "UNKNOWN_<code>".
func ResponseName(code int32) string {
	if e, ok := responseIndex[code]; ok {
		return e.Name
	}
	return "UNKNOWN_" + strconv.Itoa(int(code))
}

// ResponseCodes returns a copy of the whole wire-code table in ascending
// code order.
func ResponseCodes() []ResponseCodeInfo { return append([]ResponseCodeInfo(nil), responseTable...) }

// ResponseError is a non-success response code turned into a Go error, for
// code that calls a RocketMQ peer (tests, tools). Match with errors.As, or
// compare Code.
type ResponseError struct {
	Code   int32
	Remark string
}

// Error names the code and carries the remark.
func (e *ResponseError) Error() string {
	if e.Remark == "" {
		return "codec: response " + ResponseName(e.Code) + " (" + strconv.Itoa(int(e.Code)) + ")"
	}
	return "codec: response " + ResponseName(e.Code) + " (" + strconv.Itoa(int(e.Code)) + "): " + e.Remark
}

// Retriable reports the table's retriable flag for e.Code (false for unknown codes).
func (e *ResponseError) Retriable() bool { return responseIndex[e.Code].Retriable }

// ResponseErr returns nil for a SUCCESS response and a *ResponseError
// carrying code and remark otherwise.
func ResponseErr(c *Command) error {
	if c.Code == Success {
		return nil
	}
	return &ResponseError{Code: c.Code, Remark: c.Remark}
}
