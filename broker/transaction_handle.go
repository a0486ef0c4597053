package broker

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/popshim/popshim/codec"
)

// TransactionHandle is what END_TRANSACTION needs to find a half besides
// its producer group: a protocol that answers a SEND with one opaque id
// (gRPC's SendResultEntry.transaction_id, echoed by EndTransaction and by
// RecoverOrphanedTransactionCommand) can carry these two values in it, so
// it needs no map from ids to halves and survives restarts.
type TransactionHandle struct {
	// CommitLogOffset is the half's physical offset (SendResult.OffsetMsgID
	// decoded; transaction.Check.CommitLogOffset).
	CommitLogOffset int64
	// TranStateTableOffset is the half's sequence number
	// (SendResult.QueueOffset of a half; transaction.Check's field).
	TranStateTableOffset int64
}

// String encodes h as "<commitLogOffset hex>-<tranStateTableOffset hex>"
// (lower case). Any goroutine.
func (h TransactionHandle) String() string {
	return strconv.FormatInt(h.CommitLogOffset, 16) + "-" + strconv.FormatInt(h.TranStateTableOffset, 16)
}

// HalfHandle returns the handle of a half SEND's result: commitLogOffset
// from its OffsetMsgID, tranStateTableOffset its QueueOffset. Errors:
// codec.ErrBadMsgID (not a half's result).
func HalfHandle(r SendResult) (TransactionHandle, error) {
	_, phys, err := codec.DecodeOffsetMsgID(r.OffsetMsgID)
	if err != nil {
		return TransactionHandle{}, err
	}
	return TransactionHandle{CommitLogOffset: phys, TranStateTableOffset: r.QueueOffset}, nil
}

// ParseTransactionHandle decodes TransactionHandle.String's form. Errors
// name the input; answer them as END_TRANSACTION's "Find prepared
// transaction message failed" (the id names no half).
func ParseTransactionHandle(s string) (TransactionHandle, error) {
	a, b, ok := strings.Cut(s, "-")
	if ok {
		phys, err1 := strconv.ParseInt(a, 16, 64)
		seq, err2 := strconv.ParseInt(b, 16, 64)
		if err1 == nil && err2 == nil && phys >= 0 && seq >= 0 {
			return TransactionHandle{CommitLogOffset: phys, TranStateTableOffset: seq}, nil
		}
	}
	return TransactionHandle{}, fmt.Errorf("broker: %q is not a transaction handle", s)
}
