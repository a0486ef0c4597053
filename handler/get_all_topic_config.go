package handler

// GET_ALL_TOPIC_CONFIG (21).
//
// Header: none, or topicSeq / dataVersion / maxTopicNum from newer admin
// tools (GetAllTopicConfigRequestHeader.java); paging is not implemented,
// so every topic comes back in one reply.
//
// Behaviour: answers {"dataVersion":{...},"topicConfigTable":{name:
// TopicConfig,...}} (TopicConfigSerializeWrapper) over every topic,
// system topics included, plus header totalTopicNum.
//
// Response codes: SUCCESS (0).

import (
	"strconv"

	"github.com/popshim/popshim/broker/meta"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleGetAllTopicConfig(c remoting.Conn, req *codec.Command) {
	all := b.Topics.All()
	w := codec.TopicConfigWrapper{DataVersion: b.Topics.DataVersion(), TopicConfigTable: make(map[string]codec.TopicConfig, len(all))}
	for _, m := range all {
		w.TopicConfigTable[m.TopicName] = meta.TopicConfigOf(m)
	}
	resp := codec.NewResponse(req, codec.Success, "")
	resp.SetExt("totalTopicNum", strconv.Itoa(len(all)))
	resp.Body = codec.EncodeTopicConfigWrapper(&w)
	reply.Respond(c, req, resp)
}
