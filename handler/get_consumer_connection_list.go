package handler

// GET_CONSUMER_CONNECTION_LIST (203).
//
// Header: consumerGroup (required) (GetConsumerConnectionListRequestHeader.java).
//
// Behaviour: the live members of the consumer group as
// AdminBrokerProcessor.getConsumerConnectionList answers: one Connection per
// client (clientId, clientAddr "ip:port", language, version ordinal), the
// subscriptions of the latest heartbeat by topic, and the group's
// consumeType, messageModel and consumeFromWhere. mqadmin
// consumerConnection prints them. Memory only: answered on the event loop.
//
// Response codes: SUCCESS (0); CONSUMER_NOT_ONLINE (206) "the consumer
// group[G] not online" when no member is alive; SYSTEM_ERROR (1) naming a
// missing header field.

import (
	"github.com/popshim/popshim/broker/clients"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

// connectionsOf converts registry channels to wire Connections.
func connectionsOf(chs []clients.ClientChannel) []codec.Connection {
	out := make([]codec.Connection, 0, len(chs))
	for _, ch := range chs {
		out = append(out, codec.Connection{ClientID: ch.ClientID, ClientAddr: ch.RemoteAddr, Language: ch.Language, Version: ch.Version})
	}
	return out
}

func (b *Broker) handleGetConsumerConnectionList(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeConsumerGroupHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	info, ok := b.Clients.Consumer(h.ConsumerGroup)
	if !ok {
		reply.Code(c, req, codec.ConsumerNotOnline, "the consumer group["+h.ConsumerGroup+"] not online")
		return
	}
	body := codec.ConsumerConnection{
		ConnectionSet: connectionsOf(info.Channels), ConsumeType: info.ConsumeType,
		MessageModel: info.MessageModel, ConsumeFromWhere: info.ConsumeFromWhere,
		SubscriptionTable: make(map[string]codec.SubscriptionData, len(info.Subscriptions)),
	}
	for topic, s := range info.Subscriptions {
		sd := codec.SubscriptionData{Topic: s.Topic, SubString: s.SubString, ExpressionType: s.ExpressionType,
			TagsSet: s.Tags, SubVersion: s.SubVersion}
		for _, tag := range s.Tags {
			sd.CodeSet = append(sd.CodeSet, codec.TagHashCode(tag))
		}
		body.SubscriptionTable[topic] = sd
	}
	resp := codec.NewResponse(req, codec.Success, "")
	resp.Body = codec.EncodeConsumerConnection(body)
	reply.Respond(c, req, resp)
}
