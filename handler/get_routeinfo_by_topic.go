package handler

// GET_ROUTEINFO_BY_TOPIC (105) — name-server role.
//
// Header: topic (required), acceptStandardJsonOnly (optional boolean)
// (namesrv/GetRouteInfoRequestHeader.java).
//
// Behaviour:
//   - Every topic routes to this broker alone: one BrokerData
//     {brokerName: --broker-name, cluster: --cluster-name, brokerAddrs:
//     {0: advertised ip:port of --listen}} and one QueueData with the topic's
//     queue counts, perm and topicSysFlag.
//   - An unknown topic is created through TopicTable.GetOrCreate: with
//     --auto-create-topic it gets TBW102's defaults (--default-topic-queue-nums
//     queues, perm 6), so clients see a route at once and the producer's
//     TBW102 fallback is never needed; %RETRY%<group> always gets its
//     one-queue retry topic (pop-scenarios RET-06). TBW102 itself, the
//     cluster-name and broker-name topics exist as system topics (perm 7).
//   - The body is compact JSON; brokerAddrs keys are bare numbers (legacy
//     fastjson form) when the request version is below 401 (V4_9_4) and
//     acceptStandardJsonOnly is not set, quoted otherwise — what a Java name
//     server writes (remoting-protocol §5.17). Both clients read both forms.
//
// Response codes: SUCCESS (0) with TopicRouteData; TOPIC_NOT_EXIST (17) when
// the topic is unknown and may not be created (auto-create off, invalid or
// reserved name); SYSTEM_BUSY (2) / SYSTEM_ERROR (1) when the writer refuses
// the creation; SYSTEM_ERROR (1) naming a missing header field.

import (
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleGetRouteInfoByTopic(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeGetRouteInfoRequestHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	m, err := b.Topics.GetOrCreate(h.Topic)
	if err != nil {
		if reply.IsWriterErr(err) {
			reply.SubmitError(c, req, err)
			return
		}
		reply.Code(c, req, codec.TopicNotExist, "No topic route info in name server for the topic: "+h.Topic)
		return
	}
	route := b.self.RouteOf(m)
	resp := codec.NewResponse(req, codec.Success, "")
	resp.Body = codec.AppendTopicRouteData(nil, &route, !codec.RouteUsesStandardJSON(req.Version, h))
	reply.Respond(c, req, resp)
}
