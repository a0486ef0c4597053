package handler

import (
	"github.com/popshim/popshim/broker/clients"
	"github.com/popshim/popshim/handler/namesrv"
	"github.com/popshim/popshim/remoting"
)

// What the whole-stack tests (package handler_test) need of the adapter's
// unexported names: protocol constants and pure helpers, never state.

// Request codes and limits the tests send against.
const (
	RequestViewBrokerStatsData = requestViewBrokerStatsData
	RequestGetKVConfig         = requestGetKVConfig
	RequestDeleteKVConfig      = requestDeleteKVConfig
	CreateRegisterTimeout      = createRegisterTimeout
	MaxHeartbeatBodyBytes      = maxHeartbeatBodyBytes
	MaxBatchAckBodyBytes       = maxBatchAckBodyBytes
	StatsTopicPutNums          = statsTopicPutNums
	StatsTopicPutSize          = statsTopicPutSize
	StatsGroupGetNums          = statsGroupGetNums
	StatsBrokerPutNums         = statsBrokerPutNums
)

// Bodies the tests decode.
type (
	BrokerStatsData       = brokerStatsData
	StatsFigure           = statsFigure
	QueryConsumeQueueBody = queryConsumeQueueBody
)

// Helpers whose results the tests compare with.
var (
	NoRouteRemark   = noRouteRemark
	ZeroRuntimeKeys = zeroRuntimeKeys
)

// Self is this broker's name-server identity (routes, registrations).
func (b *Broker) Self() namesrv.Self { return b.self }

// HBCache is the HEART_BEAT fast-path cache.
func (b *Broker) HBCache() *clients.HeartbeatCache { return b.hbCache }

// TableReply is (*Broker).tableReply, for the test that it leaves the
// event loop.
func (b *Broker) TableReply(h remoting.HandlerFunc) remoting.HandlerFunc { return b.tableReply(h) }
