package grpcserver

import (
	"fmt"

	"github.com/popshim/popshim/codec"
)

// A v5 receipt handle is the remoting receipt (POP_CK / extraInfo, 8
// space-separated fields, codec.ExtraInfo) plus a ninth field, the
// message's commit-log offset, as rocketmq-proxy issues it
// (proxy/src/main/java/org/apache/rocketmq/proxy/processor/ConsumerProcessor.java
// createHandle; decoded by
// common/src/main/java/org/apache/rocketmq/common/consumer/ReceiptHandle.java):
//
//	<ckOffset> <popTime> <invisibleTime> <reviveQid> <retryFlag> <brokerName> <queueId> <queueOffset> <commitLogOffset>
//
// Clients treat it as opaque and only send it back. The first eight fields
// are exactly the remoting handle, so ACK and CHANGE can be served by the
// same core path for both protocols; the ninth locates the record for
// ForwardMessageToDeadLetterQueue.

// ReceiptHandleOf returns the v5 handle for the remoting receipt popCK
// (8 fields) of a record whose commit-log offset is commitLogOffset. A
// popCK that already has a ninth field keeps its own. Errors wrap
// codec.ErrBadExtraInfo. Any goroutine.
func ReceiptHandleOf(popCK string, commitLogOffset int64) (string, error) {
	h, _, err := receiptHandleOf(popCK, commitLogOffset)
	return h, err
}

func receiptHandleOf(popCK string, commitLogOffset int64) (string, codec.ExtraInfo, error) {
	ei, err := codec.ParseExtraInfo(popCK)
	if err != nil {
		return "", codec.ExtraInfo{}, err
	}
	if ei.HasCommitLogOffset {
		return popCK, ei, nil
	}
	ei.CommitLogOffset, ei.HasCommitLogOffset = commitLogOffset, true
	return ei.String(), ei, nil
}

// ParseReceiptHandle decodes a handle a v5 client sent back (8 or 9
// fields; the proxy needs at least 8). Errors wrap codec.ErrBadExtraInfo:
// the endpoint answers INVALID_RECEIPT_HANDLE (StatusOfError). The result
// aliases h. Any goroutine.
func ParseReceiptHandle(h string) (codec.ExtraInfo, error) {
	ei, err := codec.ParseExtraInfo(h)
	if err != nil {
		return codec.ExtraInfo{}, fmt.Errorf("receipt handle: %w", err)
	}
	return ei, nil
}

// RemotingExtraInfo returns the 8-field remoting receipt of a v5 handle:
// what the remoting ACK / CHANGE path and its checkpoints know. The Java
// broker ignores a ninth field; popshim's codec accepts one too, so this is
// needed only where a handle is compared or stored. Any goroutine.
func RemotingExtraInfo(ei codec.ExtraInfo) string {
	ei.HasCommitLogOffset = false
	return ei.String()
}

// ChangedReceiptHandle returns the handle that replaces old after a
// successful CHANGE_MESSAGE_INVISIBLETIME whose response carried popTime,
// invisibleTime (milliseconds) and reviveQid: field 0 becomes the
// message's own queue offset, fields 1–3 come from the response, the retry
// flag, broker, queue id and offset stay, and the original commit-log
// offset is kept (MQClientAPIImpl.changeInvisibleTimeAsync plus the proxy's
// createHandle). The old handle is dead from then on. Any goroutine.
func ChangedReceiptHandle(old codec.ExtraInfo, popTime, invisibleTime int64, reviveQid int32) string {
	n := old
	n.CkQueueOffset = old.QueueOffset
	n.PopTime, n.InvisibleTime, n.ReviveQid = popTime, invisibleTime, reviveQid
	if !n.HasCommitLogOffset {
		n.CommitLogOffset, n.HasCommitLogOffset = -1, true
	}
	return n.String()
}

// HandleExpired reports whether a handle's invisible time has passed at
// nowMillis (pop time + invisible time ≤ now), the proxy's check before it
// answers INVALID_RECEIPT_HANDLE "receipt handle is expired"; AckMessage
// and ChangeInvisibleDuration apply it (errHandleExpired).
func HandleExpired(ei codec.ExtraInfo, nowMillis int64) bool {
	return ei.PopTime+ei.InvisibleTime <= nowMillis
}
