package handler

// SEARCH_OFFSET_BY_TIMESTAMP (29).
//
// Header: topic, queueId, timestamp (ms) (required), boundaryType
// (optional, LOWER or UPPER, default LOWER) (SearchOffsetRequestHeader.java).
//
// Behaviour: binary search over the queue's stored records by
// STORETIMESTAMP, on the reader pool (it reads RocksDB, so never on the
// event loop).
//   - LOWER: the first queueOffset whose store time is ≥ timestamp; the max
//     offset when every message is older.
//   - UPPER: the last queueOffset whose store time is ≤ timestamp; the min
//     offset when every message is newer.
//
// An empty or unknown queue answers its max offset (0 when unknown).
//
// Response codes: SUCCESS (0) with header offset; SYSTEM_BUSY (2) when the
// reader queue is full; SYSTEM_ERROR (1) for a store error or a missing or
// invalid header field.

import (
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleSearchOffsetByTimestamp(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeSearchOffsetRequestHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	job := func() {
		off, err := b.searchOffset(h)
		if err != nil {
			reply.Code(c, req, codec.SystemError, "search offset: "+err.Error())
			return
		}
		resp := codec.NewResponse(req, codec.Success, "")
		codec.OffsetResponseHeader{Offset: off}.Encode(resp)
		reply.Respond(c, req, resp)
	}
	if !b.SubmitRead(job) {
		reply.Code(c, req, codec.SystemBusy, reply.BusyRemark)
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
