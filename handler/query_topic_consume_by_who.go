package handler

// QUERY_TOPIC_CONSUME_BY_WHO (300).
//
// Header: topic (required) (QueryTopicConsumeByWhoRequestHeader.java).
//
// Behaviour: the consumer groups of the topic, as
// AdminBrokerProcessor.queryTopicConsumeByWho answers: groups with a live
// member subscribing the topic, plus groups with a committed offset on it
// (POP commits one on its first POP). mqadmin queryMsgById and
// queryMsgByKey ask it after finding a message. Memory only: answered on
// the event loop. Body {"groupList":[...]}, sorted.
//
// Response codes: SUCCESS (0); SYSTEM_ERROR (1) naming a missing header
// field.

import (
	"slices"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleQueryTopicConsumeByWho(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeTopicHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	groups := append(b.Clients.GroupsSubscribing(h.Topic), b.Store.GroupsOfTopic(h.Topic)...)
	slices.Sort(groups)
	resp := codec.NewResponse(req, codec.Success, "")
	resp.Body = codec.EncodeGroupList(slices.Compact(groups))
	reply.Respond(c, req, resp)
}
