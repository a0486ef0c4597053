package handler

import (
	"fmt"
	"sync"
	"time"
)

// rateWindows are the windows of the putTps / getTransferredTps figures,
// as StoreStatsService.getPutTps: "10 s, 60 s, 600 s".
var rateWindows = [...]time.Duration{10 * time.Second, time.Minute, 10 * time.Minute}

// countSample is a counter value at an instant.
type countSample struct {
	at    time.Time
	count uint64
}

// runtimeStats derives the TPS and per-day figures of
// GET_BROKER_RUNTIME_INFO from the monotonic put/get counters
// (broker.Metrics.PutNums, GetNums), sampled once a second by
// Broker.Start's goroutine, as StoreStatsService samples its own, and by
// each runtime-info request (at most one sample per second, the last 11
// minutes kept): a TPS figure is the rate between now and the newest
// sample at least its window old, or since process start in the broker's
// first 10 minutes. (Until 2026-12-07 only requests sampled, so a
// clusterList after a quiet spell showed the average since the previous
// one.) Likewise the "morning" totals are the counts at the first sample
// of that local day (0 on the boot day, as a Java broker that started
// today). Any goroutine (mu).
type runtimeStats struct {
	mu sync.Mutex
	// put and get are the recorded samples, oldest first. REQUIRES: mu held.
	put, get []countSample
	// day is the local date of the newest sample; todayPut/Get and
	// yesterdayPut/Get the counts at the start of today and yesterday.
	day                        string
	todayPut, todayGet         uint64
	yesterdayPut, yesterdayGet uint64
}

// runtimeFigures are the values runtimeStats.observe derives.
type runtimeFigures struct {
	putTps, getTps                 string // "a b c": 10 s, 60 s, 600 s rates, msgs/s
	putYesterday, putToday, putNow uint64 // msgPutTotal{YesterdayMorning,TodayMorning,TodayNow}
	getYesterday, getToday, getNow uint64 // msgGetTotal{...}
}

// observe records the counters put and get at now (boot is the process
// start, counters 0) and returns the derived figures.
func (s *runtimeStats) observe(now, boot time.Time, put, get uint64) runtimeFigures {
	s.mu.Lock()
	defer s.mu.Unlock()
	day := now.Format("2006-01-02")
	if s.day == "" {
		if boot.Format("2006-01-02") != day {
			// Started on an earlier day: the counts at this morning are
			// unknown; take the current ones so today's figures start at 0.
			s.todayPut, s.todayGet = put, get
		}
		s.day = day
	} else if s.day != day {
		s.yesterdayPut, s.yesterdayGet = s.todayPut, s.todayGet
		s.todayPut, s.todayGet = put, get
		s.day = day
	}
	f := runtimeFigures{
		putTps: rates(s.put, now, boot, put), getTps: rates(s.get, now, boot, get),
		putYesterday: s.yesterdayPut, putToday: s.todayPut, putNow: put,
		getYesterday: s.yesterdayGet, getToday: s.todayGet, getNow: get,
	}
	s.put = record(s.put, now, put)
	s.get = record(s.get, now, get)
	return f
}

// record appends (now, count) unless the newest sample is under a second
// old, and drops samples older than the longest window plus a minute.
func record(samples []countSample, now time.Time, count uint64) []countSample {
	if n := len(samples); n > 0 && now.Sub(samples[n-1].at) < time.Second {
		return samples
	}
	samples = append(samples, countSample{at: now, count: count})
	horizon := now.Add(-rateWindows[len(rateWindows)-1] - time.Minute)
	i := 0
	for i < len(samples)-1 && samples[i].at.Before(horizon) {
		i++
	}
	return append(samples[:0], samples[i:]...)
}

// rates formats the three window rates of count at now, "%.2f %.2f %.2f"
// as StoreStatsService.getPutTps.
func rates(samples []countSample, now, boot time.Time, count uint64) string {
	var out [len(rateWindows)]float64
	for w, win := range rateWindows {
		from := countSample{at: boot}
		for i := len(samples) - 1; i >= 0; i-- {
			if now.Sub(samples[i].at) >= win {
				from = samples[i]
				break
			}
		}
		if secs := now.Sub(from.at).Seconds(); secs > 0 && count >= from.count {
			out[w] = float64(count-from.count) / secs
		}
	}
	return fmt.Sprintf("%.2f %.2f %.2f", out[0], out[1], out[2])
}

// sampleRuntime records a sample of the put/get counters every second
// until stop is closed, then closes done. Its own goroutine.
func (b *Broker) sampleRuntime(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-tick.C:
			b.rstats.observe(now, processStart, b.Metrics.PutNums.Load(), b.Metrics.GetNums.Load())
		}
	}
}
