package handler

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestBrokerStatsWindows: a window's sum is the growth since the newest
// sample at least the window old, else since boot; samples are thinned.
func TestBrokerStatsWindows(t *testing.T) {
	var s brokerStats
	boot := time.Unix(1_000_000, 0)
	at := func(d time.Duration) time.Time { return boot.Add(d) }
	f := s.observe("N", "k", at(10*time.Second), boot, 100)
	assert.Equal(t, statsFigure{Sum: 100, Tps: 10}, f[0], "first request: since boot")
	f = s.observe("N", "k", at(80*time.Second), boot, 160)
	assert.Equal(t, statsFigure{Sum: 60, Tps: 60.0 / 70}, f[0], "minute: since the sample 70 s ago")
	assert.Equal(t, uint64(160), f[1].Sum, "hour: since boot")
	for i := range 5000 {
		s.observe("N", "k", at(80*time.Second+time.Duration(i)*time.Second), boot, 160+uint64(i))
	}
	assert.LessOrEqual(t, len(s.items["N\x00k"]), 200, "samples are thinned")
	f = s.observe("N", "k", at(30*time.Hour), boot, 10000)
	assert.Equal(t, uint64(10000-(160+4999)), f[2].Sum, "day: since the newest sample over a day old")
}

// TestRuntimeStatsRates: the TPS windows use the newest sample at least
// the window old, and a day change moves today's morning to yesterday's.
func TestRuntimeStatsRates(t *testing.T) {
	boot := time.Date(2026, 1, 1, 23, 0, 0, 0, time.Local)
	var s runtimeStats
	f := s.observe(boot.Add(100*time.Second), boot, 1000, 0)
	assert.Equal(t, "10.00 10.00 10.00", f.putTps, "no sample yet: since boot")
	f = s.observe(boot.Add(120*time.Second), boot, 1400, 0)
	assert.Equal(t, "20.00 11.67 11.67", f.putTps)
	f = s.observe(boot.Add(2*time.Hour), boot, 5000, 7)
	assert.Equal(t, uint64(0), f.putYesterday)
	assert.Equal(t, uint64(5000), f.putToday, "first sample of a new day")
	assert.Equal(t, uint64(5000), f.putNow)
}
