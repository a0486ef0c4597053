package handler

// GET_BROKER_CLUSTER_INFO (106) — name-server role.
//
// Header: none.
//
// Behaviour: describes the one-broker cluster this process is:
// {"brokerAddrTable":{<broker-name>:BrokerData},"clusterAddrTable":
// {<cluster-name>:[<broker-name>]}} (body/ClusterInfo.java), the broker
// under id 0 at its advertised address. Admin tools
// (examineBrokerClusterInfo, mqadmin clusterList, PopConsumerRetryIT's
// switchPop) use it to find master addresses. brokerAddrs keys follow the
// same rule as GET_ROUTEINFO_BY_TOPIC: bare numbers for request versions
// below 401, quoted otherwise.
//
// Response codes: SUCCESS (0) with the ClusterInfo body.

import (
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleGetBrokerClusterInfo(c remoting.Conn, req *codec.Command) {
	info := b.self.ClusterInfo()
	resp := codec.NewResponse(req, codec.Success, "")
	resp.Body = codec.AppendClusterInfo(nil, &info, req.Version < 401)
	reply.Respond(c, req, resp)
}
