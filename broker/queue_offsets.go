package broker

// Queue offsets: GET_MAX_OFFSET (30), GET_MIN_OFFSET (31),
// SEARCH_OFFSET_BY_TIMESTAMP (29) and GET_EARLIEST_MSG_STORETIME (32) of
// remoting (broker/.../processor/AdminBrokerProcessor.java). Queue offsets
// are logical: the n-th message of a queue has queueOffset n. An unknown
// topic or queue is an empty queue at offset 0; none of these refuse it,
// as the Java store answers for a queue it has no ConsumeQueue of.

import (
	"errors"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// MaxOffset is the queue's max offset: the queueOffset the next message
// will get (one past the last durable message), from memory; 0 for an
// unknown topic or queue. Every stored message is committed, so
// GET_MAX_OFFSET's committed=false changes nothing. The *Error is always
// nil today (kept so a protocol that refuses unknown queues can add it
// without changing callers). Any goroutine; never blocks.
func (b *Broker) MaxOffset(topic string, queueID int32) (int64, *Error) {
	return b.Store.MaxOffset(topic, queueID), nil
}

// MinOffset is the smallest queueOffset still stored (raised by
// retention), from memory; an empty queue answers its max offset, an
// unknown one 0. The *Error is always nil today, as for MaxOffset. Any
// goroutine; never blocks.
func (b *Broker) MinOffset(topic string, queueID int32) (int64, *Error) {
	return b.Store.MinOffset(topic, queueID), nil
}

// SearchOffsetRequest is one search by store time: topic, queueId,
// timestamp (ms since epoch) and boundaryType (codec.BoundaryLower or
// codec.BoundaryUpper; anything else reads as LOWER)
// (remoting/.../header/SearchOffsetRequestHeader.java).
type SearchOffsetRequest struct {
	codec.SearchOffsetRequestHeader
}

// SearchOffset binary-searches the queue's stored records by
// STORETIMESTAMP on the reader pool (it reads RocksDB). LOWER: the first
// queueOffset whose store time is ≥ Timestamp, the max offset when every
// message is older. UPPER: the last queueOffset whose store time is ≤
// Timestamp, the min offset when every message is newer. An empty or
// unknown queue answers its max offset (0 when unknown).
//
// Errors (*Error): SYSTEM_BUSY (2) when the reader queue is full (done on
// the caller's goroutine); SYSTEM_ERROR (1) "search offset: <cause>" for a
// store error. done runs on a reader goroutine otherwise. Any goroutine;
// never blocks.
func (b *Broker) SearchOffset(r SearchOffsetRequest, done func(int64, error)) {
	job := func() {
		off, err := b.searchOffset(r.SearchOffsetRequestHeader)
		if err != nil {
			done(0, searchFailed(err))
			return
		}
		done(off, nil)
	}
	if !b.SubmitRead(job) {
		done(0, errBusy)
	}
}

// searchOffset runs the search of one request. Reader pool only.
func (b *Broker) searchOffset(h codec.SearchOffsetRequestHeader) (int64, error) {
	if h.BoundaryType != codec.BoundaryUpper {
		return b.Store.SearchOffsetByTimestamp(h.Topic, h.QueueID, h.Timestamp)
	}
	// UPPER: one before the first message newer than timestamp.
	minOff := b.Store.MinOffset(h.Topic, h.QueueID)
	next, err := b.Store.SearchOffsetByTimestamp(h.Topic, h.QueueID, h.Timestamp+1)
	if err != nil {
		return 0, err
	}
	if next <= minOff {
		return minOff, nil
	}
	return next - 1, nil
}

// searchFailed is the failure of a search by timestamp: SYSTEM_ERROR (1)
// "search offset: <cause>".
func searchFailed(err error) *Error {
	return &Error{Code: codec.SystemError, Remark: "search offset: " + err.Error()}
}

// EarliestMsgStoreTime reads the first stored message of the queue on the
// reader pool and gives its STORETIMESTAMP (ms since epoch); -1 when the
// queue is empty or unknown, as the Java store answers.
//
// Errors (*Error): SYSTEM_BUSY (2) when the reader queue is full (done on
// the caller's goroutine); SYSTEM_ERROR (1) "read earliest message:
// <cause>" for a store error. done runs on a reader goroutine otherwise.
// Any goroutine; never blocks.
func (b *Broker) EarliestMsgStoreTime(topic string, queueID int32, done func(int64, error)) {
	job := func() {
		ts := int64(-1)
		minOff, maxOff := b.Store.MinOffset(topic, queueID), b.Store.MaxOffset(topic, queueID)
		if minOff < maxOff {
			rec, err := b.Store.ReadMessage(topic, queueID, minOff)
			switch {
			case err == nil:
				if t, ok := popstore.StoreTimestamp(rec); ok {
					ts = t
				}
			case !errors.Is(err, popstore.ErrNotFound):
				done(0, &Error{Code: codec.SystemError, Remark: "read earliest message: " + err.Error()})
				return
			}
		}
		done(ts, nil)
	}
	if !b.SubmitRead(job) {
		done(0, errBusy)
	}
}
