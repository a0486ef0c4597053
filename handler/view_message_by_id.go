package handler

// VIEW_MESSAGE_BY_ID (33).
//
// Header: offset (required; the commit-log physical offset decoded from an
// offsetMsgId by the client), topic (optional) (ViewMessageRequestHeader.java).
//
// Behaviour: looks the stored-message record up by its PHYSICALOFFSET (the
// store's physical-offset index) on the reader pool, and answers the record
// exactly as stored (the layout of a PULL/POP body, one record), which the
// client decodes with MessageDecoder. An offset no message has is looked up
// among the undecided half messages (their offsetMsgId is the SEND reply's
// msgId): the half is answered as Java's commit log holds it, topic
// RMQ_SYS_TRANS_HALF_TOPIC, queue 0, queueOffset its tranStateTableOffset,
// REAL_TOPIC and REAL_QID set (mqadmin queryMsgById on a half). When topic
// is given and the record belongs to another topic (for a half: neither
// the half topic nor its real topic), the message counts as not found.
//
// Response codes: SUCCESS (0) with the record as body; SYSTEM_ERROR (1)
// "can not find message by the offset, <offset>" when none (as
// QueryMessageProcessor answers), for a store error, or naming a missing
// field; SYSTEM_BUSY (2) when the reader queue is full.

import (
	"errors"
	"strconv"

	"github.com/popshim/popshim/broker/transaction"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleViewMessageByID(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeViewMessageRequestHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	notFound := "can not find message by the offset, " + strconv.FormatInt(h.Offset, 10)
	job := func() {
		rec, err := b.Store.MessageByPhysicalOffset(h.Offset)
		if errors.Is(err, popstore.ErrNotFound) {
			if half, ok, herr := b.Store.Half(h.Offset); herr == nil && ok {
				rec, err = half.Record, nil
			}
		}
		switch {
		case errors.Is(err, popstore.ErrNotFound):
			reply.Code(c, req, codec.SystemError, notFound)
			return
		case err != nil:
			reply.Code(c, req, codec.SystemError, "view message: "+err.Error())
			return
		}
		if h.Topic != "" {
			if m, _, err := codec.UnsafeDecodeMessage(rec); err == nil && m.Topic != h.Topic {
				// A half matches its real topic too (mqadmin queryMsgById -t).
				if real, _ := m.Property(codec.PropertyRealTopic); m.Topic != transaction.HalfTopic || real != h.Topic {
					reply.Code(c, req, codec.SystemError, notFound)
					return
				}
			}
		}
		resp := codec.NewResponse(req, codec.Success, "")
		resp.Body = rec
		reply.Respond(c, req, resp)
	}
	if !b.submitLargeRead(c, req, job) {
		reply.Code(c, req, codec.SystemBusy, reply.BusyRemark)
	}
}
