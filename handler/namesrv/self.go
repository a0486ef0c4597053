package namesrv

import (
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// Self is this broker as the name-server role describes it: its name, its
// cluster and its advertised address. Routes and cluster info built from
// it name this broker alone, as master (brokerId 0). Immutable once built;
// any goroutine.
type Self struct {
	BrokerName  string // --broker-name, BrokerData.brokerName
	ClusterName string // --cluster-name, BrokerData.cluster
	// Addr returns the advertised broker address ("ip:port"); called for
	// every route, so it must be cheap and safe on the event loop.
	Addr func() string
}

// BrokerData is this broker as a route's BrokerData (master, id 0)
// (remoting/protocol/route/BrokerData.java).
func (s Self) BrokerData() codec.BrokerData {
	return codec.BrokerData{
		BrokerAddrs: map[int64]string{0: s.Addr()},
		BrokerName:  s.BrokerName,
		Cluster:     s.ClusterName,
	}
}

// RouteOf builds the route of one topic held by this broker: this
// broker's BrokerData and one QueueData with m's queue counts, perm and
// topicSysFlag (route/TopicRouteData.java).
func (s Self) RouteOf(m popstore.TopicMeta) codec.TopicRouteData {
	return codec.TopicRouteData{
		BrokerDatas: []codec.BrokerData{s.BrokerData()},
		QueueDatas: []codec.QueueData{{
			BrokerName:     s.BrokerName,
			Perm:           m.Perm,
			ReadQueueNums:  m.ReadQueueNums,
			TopicSysFlag:   m.TopicSysFlag,
			WriteQueueNums: m.WriteQueueNums,
		}},
	}
}

// ClusterInfo describes the one-broker cluster this process is
// (body/ClusterInfo.java): brokerAddrTable {BrokerName: BrokerData},
// clusterAddrTable {ClusterName: [BrokerName]}.
func (s Self) ClusterInfo() codec.ClusterInfo {
	return codec.ClusterInfo{
		BrokerAddrTable:  map[string]codec.BrokerData{s.BrokerName: s.BrokerData()},
		ClusterAddrTable: map[string][]string{s.ClusterName: {s.BrokerName}},
	}
}
