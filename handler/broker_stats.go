package handler

import (
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Stats names of BrokerStatsManager (store/.../stats/BrokerStatsManager.java)
// that VIEW_BROKER_STATS_DATA answers, with their keys.
const (
	statsTopicPutNums  = "TOPIC_PUT_NUMS"  // key topic: messages stored by SEND
	statsTopicPutSize  = "TOPIC_PUT_SIZE"  // key topic: body bytes stored by SEND
	statsGroupGetNums  = "GROUP_GET_NUMS"  // key topic@group: messages returned by POP and PULL
	statsGroupGetSize  = "GROUP_GET_SIZE"  // key topic@group: record bytes returned
	statsBrokerPutNums = "BROKER_PUT_NUMS" // key cluster name: all messages stored by SEND
	statsBrokerGetNums = "BROKER_GET_NUMS" // key cluster name: all messages returned
)

// statsWindows are the windows of BrokerStatsData's statsMinute, statsHour
// and statsDay.
var statsWindows = [3]time.Duration{time.Minute, time.Hour, 24 * time.Hour}

// statsFigure is one BrokerStatsItem: sum over the window, its rate per
// second, and avgpt (0: popshim keeps no per-request times for these).
type statsFigure struct {
	Sum   uint64  `json:"sum"`
	Tps   float64 `json:"tps"`
	Avgpt float64 `json:"avgpt"`
}

// brokerStats turns the monotonic message counters behind the Prometheus
// series (rocketmq_messages_in_total, …) into BrokerStatsData's per-window
// figures. No goroutine samples them: each VIEW_BROKER_STATS_DATA request
// records one sample of its item (thinned so at most ~100 are kept per
// item: every second for the last 2 minutes, every minute for 2 hours,
// every hour for 25 hours). A window's sum is the growth since the newest
// sample at least the window old or, when there is none, since the process
// started (so a first statsAll shows the traffic since boot). A Java broker
// samples every 10 s, 10 min and 1 h instead. Any goroutine (mu).
type brokerStats struct {
	mu    sync.Mutex
	items map[string][]countSample // name 0x00 key → samples, oldest first
}

// observe records value for (name, key) at now and returns the minute,
// hour and day figures.
func (s *brokerStats) observe(name, key string, now, boot time.Time, value uint64) [3]statsFigure {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.items == nil {
		s.items = make(map[string][]countSample)
	}
	id := name + "\x00" + key
	samples := s.items[id]
	var out [3]statsFigure
	for w, win := range statsWindows {
		from := countSample{at: boot}
		for i := len(samples) - 1; i >= 0; i-- {
			if now.Sub(samples[i].at) >= win {
				from = samples[i]
				break
			}
		}
		if value >= from.count {
			out[w].Sum = value - from.count
			if secs := now.Sub(from.at).Seconds(); secs > 0 {
				out[w].Tps = float64(out[w].Sum) / secs
			}
		}
	}
	s.items[id] = thinSamples(append(samples, countSample{at: now, count: value}), now)
	return out
}

// thinSamples keeps the newest sample and, going back in time, a sample
// only when it is at least the spacing of its age older than the last one
// kept; of the samples older than the day window only the newest stays.
func thinSamples(samples []countSample, now time.Time) []countSample {
	kept := samples[len(samples)-1:]
	keptAt := kept[0].at
	var out []countSample
	out = append(out, kept[0])
	for i := len(samples) - 2; i >= 0; i-- {
		age := now.Sub(samples[i].at)
		spacing := time.Second
		switch {
		case age > statsWindows[2]:
			out = append(out, samples[i]) // the day window's base; nothing older is needed
			i = 0
			continue
		case age > 2*time.Hour:
			spacing = time.Hour
		case age > 2*time.Minute:
			spacing = time.Minute
		}
		if keptAt.Sub(samples[i].at) >= spacing {
			out = append(out, samples[i])
			keptAt = samples[i].at
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// statsValue returns the counter behind (name, key) now, ok=false when
// the broker has no such item (no traffic counted for that key, an unknown
// name, or another cluster name).
func (b *Broker) statsValue(name, key string) (uint64, bool) {
	m := b.Metrics
	switch name {
	case statsTopicPutNums:
		return sumSeries(m.MessagesIn, map[string]string{"topic": key})
	case statsTopicPutSize:
		return sumSeries(m.ThroughputIn, map[string]string{"topic": key})
	case statsGroupGetNums, statsGroupGetSize:
		i := strings.LastIndexByte(key, '@')
		if i <= 0 || i == len(key)-1 {
			return 0, false
		}
		want := map[string]string{"topic": key[:i], "consumer_group": key[i+1:]}
		if name == statsGroupGetNums {
			return sumSeries(m.MessagesOut, want)
		}
		return sumSeries(m.ThroughputOut, want)
	case statsBrokerPutNums, statsBrokerGetNums:
		if key != b.Cfg.ClusterName {
			return 0, false
		}
		if name == statsBrokerPutNums {
			return m.PutNums.Load(), true
		}
		return m.GetNums.Load(), true
	}
	return 0, false
}

// sumSeries adds up the counters of vec whose labels include want;
// ok=false when none does. Walks every series of vec (admin requests only).
func sumSeries(vec *prometheus.CounterVec, want map[string]string) (uint64, bool) {
	ch := make(chan prometheus.Metric, 64)
	go func() { vec.Collect(ch); close(ch) }()
	var sum float64
	found := false
	for mt := range ch {
		var d dto.Metric
		if mt.Write(&d) != nil || d.Counter == nil {
			continue
		}
		hits := 0
		for _, lp := range d.Label {
			if v, ok := want[lp.GetName()]; ok && v == lp.GetValue() {
				hits++
			}
		}
		if hits == len(want) {
			sum += d.Counter.GetValue()
			found = true
		}
	}
	return uint64(sum), found
}
