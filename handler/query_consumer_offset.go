package handler

// QUERY_CONSUMER_OFFSET (14).
//
// Header: consumerGroup, topic, queueId (required), setZeroIfNotFound
// (optional, default true) (QueryConsumerOffsetRequestHeader.java).
//
// Behaviour: answers the committed consume offset of (consumerGroup, topic,
// queueId) from the store's in-memory copy (no RocksDB read, so it runs on
// the event loop). With no committed offset it follows
// ConsumerManageProcessor: a queue that still starts at queueOffset 0 (never
// trimmed by retention; the Java broker's "first message still in memory")
// answers offset 0 unless setZeroIfNotFound=false; otherwise QUERY_NOT_FOUND,
// and the client starts from its consumeFromWhere (GET_MAX_OFFSET,
// SEARCH_OFFSET_BY_TIMESTAMP, or 0).
//
// Response codes: SUCCESS (0) with header offset; QUERY_NOT_FOUND (22);
// SYSTEM_ERROR (1) naming a missing or invalid header field.

import (
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleQueryConsumerOffset(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeQueryConsumerOffsetRequestHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	off, ok := b.Store.ConsumerOffset(h.ConsumerGroup, h.Topic, h.QueueID)
	if !ok {
		if !h.SetZeroIfNotFound || b.Store.MinOffset(h.Topic, h.QueueID) > 0 {
			reply.Code(c, req, codec.QueryNotFound, "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first")
			return
		}
		off = 0
	}
	resp := codec.NewResponse(req, codec.Success, "")
	codec.OffsetResponseHeader{Offset: off}.Encode(resp)
	reply.Respond(c, req, resp)
}
