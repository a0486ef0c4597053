package handler

// CLEAN_EXPIRED_CONSUMEQUEUE (306), mqadmin cleanExpiredCQ.
//
// Header: none.
//
// Behaviour: SUCCESS with no body, as AdminBrokerProcessor
// cleanExpiredConsumeQueue after MessageStore.cleanExpiredConsumerQueue.
// There is nothing to clean in popshim's layout (popstore/doc.go): a
// queue entry is the stored message itself, keyed topic/queueId/queueOffset
// in the messages column family, with no separate consume-queue file, so
// retention (--retention, --retention-interval) and DELETE_TOPIC_IN_BROKER
// remove queue entries and messages together; none can outlive the other.
// Memory only: answered on the event loop.
//
// Response codes: SUCCESS (0).

import (
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleCleanExpiredConsumeQueue(c remoting.Conn, req *codec.Command) {
	reply.Respond(c, req, codec.NewResponse(req, codec.Success, ""))
}
