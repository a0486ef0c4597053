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
	// Writable reports whether the store accepts messages (batch.Writer.
	// Writable: no failed write awaiting recovery, disk below the warning
	// level). While false, registrations with external name servers
	// advertise every topic without PermWrite (AdvertisedPerm), as a Java
	// broker whose brokerPermission is read-only, so producers pick another
	// broker. The embedded name server's routes (RouteOf) keep the topic's
	// perm: they name this broker alone, so there is no other broker to
	// pick, and a route without PermWrite would only turn the SEND's clear
	// SERVICE_NOT_AVAILABLE (14) into the client's "No route info of this
	// topic". Nil: always writable. Cheap, safe on the event loop.
	Writable func() bool
	// MaskPerm applies the broker's own permission (brokerPermission, set
	// by --broker-permission and UPDATE_BROKER_CONFIG) to a topic's perm,
	// as registerBrokerAll does: registrations and routes both carry the
	// result (broker.Broker.MaskTopicPerm). Nil: perms unchanged. Cheap,
	// safe on the event loop.
	MaskPerm func(perm int32) int32
}

// writable is s.Writable() (true when nil).
func (s Self) writable() bool { return s.Writable == nil || s.Writable() }

// maskPerm is s.MaskPerm(perm) (perm when nil).
func (s Self) maskPerm(perm int32) int32 {
	if s.MaskPerm == nil {
		return perm
	}
	return s.MaskPerm(perm)
}

// AdvertisedPerm returns perm as this broker registers it now: masked
// with the broker's permission (MaskPerm), and without PermWrite while the
// store is not writable (Java masks topic perms with brokerPermission the
// same way in registerBrokerAll).
func (s Self) AdvertisedPerm(perm int32) int32 {
	perm = s.maskPerm(perm)
	if s.writable() {
		return perm
	}
	return perm &^ codec.PermWrite
}

// advertisedState is what registrations depend on besides the topic
// table: the mask AdvertisedPerm applies to a full perm. The registrar
// re-registers when it changes.
func (s Self) advertisedState() int32 {
	return s.AdvertisedPerm(codec.PermRead | codec.PermWrite | codec.PermInherit)
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
// broker's BrokerData and one QueueData with m's queue counts, perm
// (masked with the broker's permission, MaskPerm, as a Java name server
// holds it from the registration; not masked while the store refuses
// writes: see Self.Writable) and topicSysFlag (route/TopicRouteData.java).
func (s Self) RouteOf(m popstore.TopicMeta) codec.TopicRouteData {
	return codec.TopicRouteData{
		BrokerDatas: []codec.BrokerData{s.BrokerData()},
		QueueDatas: []codec.QueueData{{
			BrokerName:     s.BrokerName,
			Perm:           s.maskPerm(m.Perm),
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
