package handler

// DELETE_TOPIC_IN_NAMESRV (216) — name-server role.
//
// Header: topic (required), clusterName (optional)
// (namesrv/DeleteTopicFromNamesrvRequestHeader.java).
//
// Behaviour: routes come from the broker's own topic table, so there is
// nothing separate to remove: mqadmin deleteTopic sends
// DELETE_TOPIC_IN_BROKER (215) first, which already removed the topic and
// with it the route. Answered SUCCESS so the admin command completes.
//
// Response codes: SUCCESS (0); SYSTEM_ERROR (1) naming a missing field.

import (
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleDeleteTopicInNamesrv(c remoting.Conn, req *codec.Command) {
	if _, err := codec.DecodeTopicHeader(req.ExtFields); err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	reply.Code(c, req, codec.Success, "")
}
