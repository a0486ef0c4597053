package handler

// GET_BROKER_CONSUME_STATS (317), mqadmin brokerConsumeStats.
//
// Header: isOrder (GetConsumeStatsInBrokerHeader.java; absent = false).
//
// Behaviour (AdminBrokerProcessor.fetchAllConsumeStatsInBroker): for every
// subscription group, one ConsumeStats per topic the group has a committed
// offset on, skipping unknown topics, non-order topics when isOrder is
// true, and topics the group's live members do not subscribe when they
// subscribe any; each ConsumeStats has one queue per write queue with the
// figures of GET_CONSUME_STATS (208) (consumeTps 0). The body is a
// ConsumeStatsList with brokerAddr, totalDiff and totalInflightDiff
// (codec.AppendConsumeStatsList). Offsets come from memory; the store
// times need store reads, so the answer is built on the reader pool.
//
// Response codes: SUCCESS (0); SYSTEM_BUSY (2) when the reader queue is
// full; SYSTEM_ERROR (1) for a store error.

import (
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleGetBrokerConsumeStats(c remoting.Conn, req *codec.Command) {
	isOrder := req.ExtFields["isOrder"] == "true"
	addr := b.AdvertisedAddr()
	job := func() {
		var groups []codec.GroupConsumeStats
		for _, g := range b.Store.GroupNames() {
			gs := codec.GroupConsumeStats{Group: g}
			for _, topic := range b.consumeStatsTopics(codec.GetConsumeStatsRequestHeader{ConsumerGroup: g}) {
				if tc, ok := b.Topics.Get(topic); !ok || (isOrder && !tc.Order) {
					continue
				}
				gs.Topics = append(gs.Topics, b.consumeStatsRows(g, []string{topic}, false))
			}
			groups = append(groups, gs)
		}
		for _, g := range groups {
			for _, rows := range g.Topics {
				if err := b.fillLastTimestamps(rows); err != nil {
					reply.Code(c, req, codec.SystemError, "broker consume stats: "+err.Error())
					return
				}
			}
		}
		resp := codec.NewResponse(req, codec.Success, "")
		resp.Body = codec.AppendConsumeStatsList(nil, addr, groups)
		reply.Respond(c, req, resp)
	}
	if !b.submitLargeRead(c, req, job) {
		reply.Code(c, req, codec.SystemBusy, reply.BusyRemark)
	}
}
