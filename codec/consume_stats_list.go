package codec

import "strconv"

// GroupConsumeStats is one subscription group's entry of a
// ConsumeStatsList: one ConsumeStats (as rows) per topic.
type GroupConsumeStats struct {
	Group  string
	Topics [][]OffsetWrapper // one ConsumeStats per topic; consumeTps 0
}

// AppendConsumeStatsList appends the GET_BROKER_CONSUME_STATS (317) body
// (body/ConsumeStatsList.java, fastjson field order):
// {"brokerAddr":addr,"consumeStatsList":[{group:[ConsumeStats...]},...],
// "totalDiff":n,"totalInflightDiff":n}. totalDiff sums brokerOffset −
// consumerOffset and totalInflightDiff sums pullOffset − consumerOffset
// over every queue (ConsumeStats.computeTotalDiff and
// computeInflightTotalDiff). Rows are sorted in place.
func AppendConsumeStatsList(dst []byte, brokerAddr string, groups []GroupConsumeStats) []byte {
	var diff, inflight int64
	dst = append(dst, `{"brokerAddr":`...)
	dst = strconv.AppendQuote(dst, brokerAddr)
	dst = append(dst, `,"consumeStatsList":[`...)
	for i, g := range groups {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '{')
		dst = strconv.AppendQuote(dst, g.Group)
		dst = append(dst, ":["...)
		for j, rows := range g.Topics {
			if j > 0 {
				dst = append(dst, ',')
			}
			for _, r := range rows {
				diff += r.BrokerOffset - r.ConsumerOffset
				inflight += r.PullOffset - r.ConsumerOffset
			}
			dst = AppendConsumeStats(dst, rows, 0)
		}
		dst = append(dst, "]}"...)
	}
	dst = append(dst, `],"totalDiff":`...)
	dst = strconv.AppendInt(dst, diff, 10)
	dst = append(dst, `,"totalInflightDiff":`...)
	dst = strconv.AppendInt(dst, inflight, 10)
	return append(dst, '}')
}
