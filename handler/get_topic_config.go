package handler

// GET_TOPIC_CONFIG (351).
//
// Header: topic (required) (GetTopicConfigRequestHeader.java; the proxy
// also sends lo=true, ignored).
//
// Behaviour: answers the topic's configuration as TopicConfig JSON
// {topicName, readQueueNums, writeQueueNums, perm, topicFilterType,
// topicSysFlag, order, attributes} (TopicConfigAndQueueMapping without
// mapping detail). The proxy reads attributes["message.type"] to type-check
// gRPC sends; absent means NORMAL. Unknown topics are not created.
//
// Response codes: SUCCESS (0) with the body; TOPIC_NOT_EXIST (17)
// "No topic in this broker. topic: <topic>"; SYSTEM_ERROR (1) naming a
// missing field.

import (
	"github.com/popshim/popshim/broker/meta"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleGetTopicConfig(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeTopicHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	m, ok := b.Topics.Get(h.Topic)
	if !ok {
		reply.Code(c, req, codec.TopicNotExist, "No topic in this broker. topic: "+h.Topic)
		return
	}
	tc := meta.TopicConfigOf(m)
	resp := codec.NewResponse(req, codec.Success, "")
	resp.Body = codec.EncodeTopicConfig(&tc)
	reply.Respond(c, req, resp)
}
