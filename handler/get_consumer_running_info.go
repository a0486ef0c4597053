package handler

// GET_CONSUMER_RUNNING_INFO (307), mqadmin consumerStatus.
//
// Header: consumerGroup, clientId (required), jstackEnable (optional)
// (GetConsumerRunningInfoRequestHeader.java).
//
// Behaviour: a Java broker forwards the request over the named client's
// connection and relays the client's answer (AdminBrokerProcessor
// callConsumer). popshim's remoting server sends requests to clients only
// oneway and does not match a client's response to a broker request, so it
// answers at once, with the codes callConsumer uses when it cannot reach
// the client: SYSTEM_ERROR "The Consumer <group> <clientId> not online" when
// no live member of the group has that clientId, otherwise SYSTEM_ERROR
// naming the limitation. Memory only: answered on the event loop.
//
// Response codes: SYSTEM_ERROR (1) always; SYSTEM_ERROR with a remark
// naming the field for a missing consumerGroup or clientId.

import (
	"fmt"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleGetConsumerRunningInfo(c remoting.Conn, req *codec.Command) {
	group, client := req.ExtFields["consumerGroup"], req.ExtFields["clientId"]
	switch {
	case group == "":
		reply.Code(c, req, codec.SystemError, "the custom field <consumerGroup> is null")
		return
	case client == "":
		reply.Code(c, req, codec.SystemError, "the custom field <clientId> is null")
		return
	}
	online := false
	if info, ok := b.Clients.Consumer(group); ok {
		for _, ch := range info.Channels {
			if ch.ClientID == client {
				online = true
				break
			}
		}
	}
	if !online {
		reply.Code(c, req, codec.SystemError, fmt.Sprintf("The Consumer <%s> <%s> not online", group, client))
		return
	}
	reply.Code(c, req, codec.SystemError, fmt.Sprintf(
		"invoke consumer <%s> <%s> Exception: popshim does not forward GET_CONSUMER_RUNNING_INFO to clients", group, client))
}
