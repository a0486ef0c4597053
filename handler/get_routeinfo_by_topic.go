package handler

// GET_ROUTEINFO_BY_TOPIC (105) — name-server role.
//
// Header: topic (required), acceptStandardJsonOnly (optional boolean)
// (namesrv/GetRouteInfoRequestHeader.java).
//
// Behaviour (namesrv/routeinfo/RouteInfoManager.pickupTopicRouteData):
//   - A topic this broker holds routes to this broker alone: one BrokerData
//     {brokerName: --broker-name, cluster: --cluster-name, brokerAddrs:
//     {0: advertised ip:port of --listen}} and one QueueData with the topic's
//     queue counts, perm and topicSysFlag.
//   - A route look-up never creates a topic, as an Apache name server never
//     does. An unknown topic answers TOPIC_NOT_EXIST; a producer then falls
//     back to TBW102's route (present with --auto-create-topic, perm 7) and
//     the topic is created by its first SEND (broker.Broker.Send); a consumer
//     logs and retries. The proxy creates what it needs with
//     UPDATE_AND_CREATE_TOPIC, which makes the route visible before it
//     answers. %RETRY%<group> exists once the group sent a HEART_BEAT or a
//     POP (both create it, 1 queue, perm 6; docs/SCENARIOS.md RET-06), as a Java
//     broker creates it on HEART_BEAT. A deleted topic stays deleted.
//   - The cluster-name and broker-name topics (and TBW102 with
//     --auto-create-topic) exist as system topics, perm 7.
//   - The body is compact JSON; brokerAddrs keys are bare numbers (legacy
//     fastjson form) when the request version is below 401 (V4_9_4) and
//     acceptStandardJsonOnly is not set, quoted otherwise — what a Java name
//     server writes (namesrv/.../processor/ClientRequestProcessor.java). Both clients read both forms.
//
// Response codes: SUCCESS (0) with TopicRouteData; TOPIC_NOT_EXIST (17) for
// an unknown topic, remark "No topic route info in name server for the
// topic: <t>" and the FAQ line, as a 5.5 name server; SYSTEM_ERROR (1)
// naming a missing header field.

import (
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

// faqSuffix is what RocketMQ's FAQUrl.suggestTodo appends to a remark.
const faqSuffix = "\nSee https://rocketmq.apache.org/docs/faq/ for further details."

// noRouteRemark is the remark of a TOPIC_NOT_EXIST (17) answer to
// GET_ROUTEINFO_BY_TOPIC, byte for byte what an Apache name server 5.5
// writes (namesrv/processor/DefaultRequestProcessor.getRouteInfoByTopic).
func noRouteRemark(topic string) string {
	return "No topic route info in name server for the topic: " + topic + faqSuffix
}

func (b *Broker) handleGetRouteInfoByTopic(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeGetRouteInfoRequestHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	m, ok := b.Topics.Get(h.Topic)
	if !ok {
		reply.Code(c, req, codec.TopicNotExist, noRouteRemark(h.Topic))
		return
	}
	route := b.self.RouteOf(m)
	resp := codec.NewResponse(req, codec.Success, "")
	resp.Body = codec.AppendTopicRouteData(nil, &route, !codec.RouteUsesStandardJSON(req.Version, h))
	reply.Respond(c, req, resp)
}
