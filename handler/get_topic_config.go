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
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/remoting"
)

// topicConfigOf converts stored metadata into the wire TopicConfig.
func topicConfigOf(m popstore.TopicMeta) codec.TopicConfig {
	return codec.TopicConfig{
		Attributes: m.Attributes, Order: m.Order, Perm: m.Perm, ReadQueueNums: m.ReadQueueNums,
		TopicFilterType: m.TopicFilterType, TopicName: m.TopicName, TopicSysFlag: m.TopicSysFlag,
		WriteQueueNums: m.WriteQueueNums,
	}
}

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
	tc := topicConfigOf(m)
	resp := codec.NewResponse(req, codec.Success, "")
	resp.Body = codec.EncodeTopicConfig(&tc)
	reply.Respond(c, req, resp)
}
