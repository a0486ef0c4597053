package handler

// SEARCH_OFFSET_BY_TIMESTAMP (29): the remoting adapter of
// broker.Broker.SearchOffset, where the search is described.
//
// Header: topic, queueId, timestamp (ms) (required), boundaryType
// (optional, LOWER or UPPER, default LOWER) (SearchOffsetRequestHeader.java).
//
// Response codes: SUCCESS (0) with header offset; SYSTEM_BUSY (2) when the
// reader queue is full; SYSTEM_ERROR (1) for a store error or a missing or
// invalid header field.

import (
	"github.com/popshim/popshim/broker"
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
	b.SearchOffset(broker.SearchOffsetRequest{SearchOffsetRequestHeader: h}, func(off int64, err error) {
		if err != nil {
			reply.Err(c, req, err)
			return
		}
		replyOffset(c, req, off)
	})
}
