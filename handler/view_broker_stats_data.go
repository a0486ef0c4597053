package handler

// VIEW_BROKER_STATS_DATA (315).
//
// Header: statsName and statsKey, both required
// (ViewBrokerStatsDataRequestHeader.java).
//
// Behaviour: answers BrokerStatsData JSON {"statsMinute","statsHour",
// "statsDay"}, each a BrokerStatsItem {"sum","tps","avgpt"}, the figures
// mqadmin statsAll prints (InTPS/OutTPS from statsMinute's tps,
// InMsg24Hour/OutMsg24Hour from the first non-zero sum of day, hour,
// minute). Items (BrokerStatsManager's names): TOPIC_PUT_NUMS and
// TOPIC_PUT_SIZE by topic (SEND, retry and DLQ topics not counted),
// GROUP_GET_NUMS and GROUP_GET_SIZE by "topic@group" (POP and PULL; a POP's
// retry messages count under the original topic), BROKER_PUT_NUMS and
// BROKER_GET_NUMS by cluster name. Counters start at 0 when the process
// starts; windows as brokerStats describes. avgpt is 0.
//
// Response codes: SUCCESS (0); SYSTEM_ERROR (1) "The stats <name> <key> not
// exist" for an item without traffic or a name popshim does not keep (as
// AdminBrokerProcessor answers for a missing StatsItem), or naming a missing
// field.

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

// requestViewBrokerStatsData is VIEW_BROKER_STATS_DATA (315) in RocketMQ's
// RequestCode.java.
const requestViewBrokerStatsData int32 = 315

// brokerStatsData is BrokerStatsData.java's JSON.
type brokerStatsData struct {
	StatsMinute statsFigure `json:"statsMinute"`
	StatsHour   statsFigure `json:"statsHour"`
	StatsDay    statsFigure `json:"statsDay"`
}

func (b *Broker) handleViewBrokerStatsData(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeViewBrokerStatsDataRequestHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	v, ok := b.statsValue(h.StatsName, h.StatsKey)
	if !ok {
		reply.Code(c, req, codec.SystemError, fmt.Sprintf("The stats <%s> <%s> not exist", h.StatsName, h.StatsKey))
		return
	}
	f := b.bstats.observe(h.StatsName, h.StatsKey, time.Now(), processStart, v)
	body, _ := json.Marshal(brokerStatsData{StatsMinute: f[0], StatsHour: f[1], StatsDay: f[2]})
	resp := codec.NewResponse(req, codec.Success, "")
	resp.Body = body
	reply.Respond(c, req, resp)
}
