package grpcserver

import (
	"slices"
	"strings"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
)

// statusOfCore maps the error an operation of the core completed with to
// the Status an RPC answers: the response-code table (StatusOf) with these
// rules first, where the core's code is more general than a v2 code:
//   - Ack, ChangeInvisibleDuration, ForwardMessageToDeadLetterQueue: a
//     handle the core calls invalid (MESSAGE_ILLEGAL "invalid receipt
//     handle…": foreign broker, fields that cannot name a checkpoint) or
//     stale (NO_MESSAGE: acked, revived or changed already, or an offset
//     outside the queue) is INVALID_RECEIPT_HANDLE, the code after which
//     push consumers stop retrying;
//   - ReceiveMessage: SUBSCRIPTION_PARSE_FAILED is
//     ILLEGAL_FILTER_EXPRESSION, REQUEST_CODE_NOT_SUPPORTED (a filter
//     type the core does not serve) UNSUPPORTED, an invalid group
//     ILLEGAL_CONSUMER_GROUP;
//   - SendMessage: a body over --max-message-size is
//     MESSAGE_BODY_TOO_LARGE;
//   - EndTransaction: a transaction id that names no undecided half of the
//     request's topic (END_TRANSACTION's SYSTEM_ERROR remarks for no such
//     half, a decided one, another producer group or sequence number:
//     endRemarksNoHalf) is INVALID_TRANSACTION_ID, what the proxy answers
//     for an id it holds no transaction data for;
//   - GO_AWAY (the core is shutting down) is TOO_MANY_REQUESTS, after
//     which producers back off and retry.
//
// nil is OK. Any goroutine.
func statusOfCore(op Op, err error) *v2.Status {
	if err == nil {
		return StatusOK()
	}
	e := broker.ErrorOf(err)
	switch op {
	case OpAck, OpChangeInvisible, OpForwardDLQ:
		if e.Code == codec.NoMessage || (e.Code == codec.MessageIllegal && strings.HasPrefix(e.Remark, "invalid receipt handle")) {
			return NewStatus(v2.Code_INVALID_RECEIPT_HANDLE, e.Remark)
		}
	case OpReceive:
		switch e.Code {
		case codec.SubscriptionParseFailed:
			return NewStatus(v2.Code_ILLEGAL_FILTER_EXPRESSION, e.Remark)
		case codec.RequestCodeNotSupported:
			return NewStatus(v2.Code_UNSUPPORTED, e.Remark)
		case codec.InvalidParameter:
			if strings.Contains(e.Remark, "group") {
				return NewStatus(v2.Code_ILLEGAL_CONSUMER_GROUP, e.Remark)
			}
		}
	case OpSend:
		if e.Code == codec.MessageIllegal && strings.Contains(e.Remark, "body size") {
			return NewStatus(v2.Code_MESSAGE_BODY_TOO_LARGE, e.Remark)
		}
	case OpEndTransaction:
		if e.Code == codec.SystemError && slices.Contains(endRemarksNoHalf, e.Remark) {
			return NewStatus(v2.Code_INVALID_TRANSACTION_ID, e.Remark)
		}
	}
	if e.Code == codec.GoAway {
		return NewStatus(v2.Code_TOO_MANY_REQUESTS, e.Remark)
	}
	return StatusOf(op, e.Code, e.Remark)
}

// endRemarksNoHalf are the remarks of the core's END_TRANSACTION refusals
// (SYSTEM_ERROR) that mean the id names no undecided half of the producer
// group (broker/transaction_end.go, Java's EndTransactionProcessor texts).
var endRemarksNoHalf = []string{
	"Find prepared transaction message failed",
	"The producer group wrong",
	"The transaction state table offset wrong",
}
