package handler

// SEND_MESSAGE (10) and SEND_MESSAGE_V2 (310): the remoting adapter of
// broker.Broker.Send, where the behaviour and the response codes are
// listed (broker/.../processor/SendMessageProcessor.java).
//
// Header (codec.SendMessageRequestHeader; long names for 10, letters a..n
// for 310): producerGroup, topic, defaultTopic, defaultTopicQueueNums,
// queueId (negative: the broker picks one), sysFlag, bornTimestamp, flag,
// properties, reconsumeTimes, unitMode, maxReconsumeTimes, batch, bname;
// the header's version is the client version. Body: the message body as
// the producer sent it (maybe compressed). The born host is the
// connection's peer. The request code, not the header's batch field,
// decides between a single message and a batch. An undecodable header →
// SYSTEM_ERROR (1) naming the field.
//
// Reply: SUCCESS (0) with SendMessageResponseHeader: msgId (the
// offsetMsgId; comma-joined for a batch), queueId, queueOffset, MSG_REGION
// (--region-id), TRACE_ON (--trace-on), recallHandle for a timer message;
// otherwise the error's code and remark. A oneway send gets no reply.

import (
	"net"
	"net/netip"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleSendMessage(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeSendRequest(req)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	b.Send(sendRequestOf(c, req, &h, false), func(r broker.SendResult, err error) { b.replySend(c, req, r, err) })
}

// sendRequestOf builds the core request of a SEND frame. It takes the body
// out of req: the stored record becomes the one copy the queued write
// keeps, instead of the completion holding the frame's body through req
// until the write (which would double the memory of every queued SEND).
func sendRequestOf(c remoting.Conn, req *codec.Command, h *codec.SendMessageRequestHeader, isBatch bool) broker.SendRequest {
	body := req.Body
	req.Body = nil
	return broker.SendRequest{
		ProducerGroup: h.ProducerGroup, Topic: h.Topic, QueueID: h.QueueID, SysFlag: h.SysFlag,
		BornTimestamp: h.BornTimestamp, Flag: h.Flag, Properties: h.Properties, ReconsumeTimes: h.ReconsumeTimes,
		MaxReconsumeTimes: h.MaxReconsumeTimes, HasMaxReconsumeTimes: h.HasMaxReconsumeTimes,
		ClientVersion: req.Version, BornHost: addrPortOf(c.RemoteAddr()), DefaultTopicQueueNums: h.DefaultTopicQueueNums,
		Batch: isBatch, Body: body,
	}
}

// replySend encodes a SEND answer: SUCCESS with the SEND response header,
// or the error's code and remark. Any goroutine.
func (b *Broker) replySend(c remoting.Conn, req *codec.Command, r broker.SendResult, err error) {
	if err != nil {
		reply.Err(c, req, err)
		return
	}
	resp := codec.NewResponse(req, codec.Success, "")
	codec.SendMessageResponseHeader{MsgID: r.OffsetMsgID, QueueID: r.QueueID, QueueOffset: r.QueueOffset,
		TransactionID: r.TransactionID, RecallHandle: r.RecallHandle,
		MsgRegion: b.Settings.RegionID, TraceOn: b.Settings.TraceOn}.EncodeJSON(resp)
	reply.Respond(c, req, resp)
}

// addrPortOf converts a connection's remote address for the bornHost field;
// anything that is not TCP/UDP becomes the zero address.
func addrPortOf(a net.Addr) netip.AddrPort {
	switch v := a.(type) {
	case *net.TCPAddr:
		return v.AddrPort()
	case *net.UDPAddr:
		return v.AddrPort()
	}
	if a != nil {
		if ap, err := netip.ParseAddrPort(a.String()); err == nil {
			return ap
		}
	}
	return netip.AddrPort{}
}
