package handler

// DELETE_TOPIC_IN_BROKER (215).
//
// Header: topic (required) (DeleteTopicRequestHeader.java).
//
// Behaviour: removes the topic's configuration, messages, queue extents and
// consumer offsets, and with them the POP retry topics of every consumer
// group known to the broker (%RETRY%<group>_<topic> and
// %RETRY%<group>+<topic>; docs/SCENARIOS.md RET-05, RocketMQ PR #7209), all in
// one write through the writer (background lane). The reply waits until it
// is fsynced; the routes disappear at that moment. In-flight POP checkpoints
// for the topic are left to revive, which drops them when the message is
// gone. System topics are refused. Deleting an unknown topic succeeds.
//
// Response codes: SUCCESS (0); INVALID_PARAMETER (29) for a system topic;
// SYSTEM_BUSY (2) when the lane is full; SYSTEM_ERROR (1) naming a missing
// field, for an invalid name, or for a failed write.

import (
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleDeleteTopicInBroker(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeTopicHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	if b.refuseAdminTopic(c, req, h.Topic) {
		return
	}
	err = b.Topics.Delete(h.Topic, b.Clients.ConsumerGroups(), func(_ []string, err error) { reply.Done(c, req, err) })
	if err != nil {
		reply.SubmitError(c, req, err)
	}
}
