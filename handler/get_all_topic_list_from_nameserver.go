package handler

// GET_ALL_TOPIC_LIST_FROM_NAMESERVER (206) — name-server role.
//
// Header: none.
//
// Behaviour: lists every topic this broker holds, system topics included,
// as body/TopicList.java {"topicList":[...]} (sorted): exactly the topics
// GET_ROUTEINFO_BY_TOPIC routes, so a deleted or never created topic is in
// neither. Used by mqadmin
// topicList and the Go admin API.
//
// Response codes: SUCCESS (0).

import (
	"encoding/json"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

// topicListBody is body/TopicList.java.
type topicListBody struct {
	TopicList []string `json:"topicList"`
}

func (b *Broker) handleGetAllTopicListFromNameserver(c remoting.Conn, req *codec.Command) {
	all := b.Topics.All()
	names := make([]string, len(all))
	for i, m := range all {
		names[i] = m.TopicName
	}
	body, err := json.Marshal(topicListBody{TopicList: names})
	if err != nil {
		reply.Code(c, req, codec.SystemError, err.Error())
		return
	}
	resp := codec.NewResponse(req, codec.Success, "")
	resp.Body = body
	reply.Respond(c, req, resp)
}
