package remoting

import "github.com/prometheus/client_golang/prometheus"

// readGauges are one Server's read-budget series (Metrics, "read_"). A nil
// *readGauges records nothing; every method is safe for concurrent use.
type readGauges struct {
	inflight prometheus.Gauge
	paused   prometheus.Gauge
	buffered prometheus.Gauge
	pauses   prometheus.Counter
}

// readGauges resolves the read-budget series of server; nil when m is nil.
func (m *Metrics) readGauges(server string) *readGauges {
	if m == nil {
		return nil
	}
	return &readGauges{
		inflight: m.readBytes.WithLabelValues(server),
		paused:   m.readPaused.WithLabelValues(server),
		buffered: m.readBuffed.WithLabelValues(server),
		pauses:   m.readPauses.WithLabelValues(server),
	}
}

// setInflight publishes the bytes reserved in the read budget.
func (g *readGauges) setInflight(n int64) {
	if g != nil {
		g.inflight.Set(float64(n))
	}
}

// pause counts a connection whose reads were paused.
func (g *readGauges) pause() {
	if g != nil {
		g.paused.Inc()
		g.pauses.Inc()
	}
}

// resume counts a paused connection that reads again or closed.
func (g *readGauges) resume() {
	if g != nil {
		g.paused.Dec()
	}
}

// addPausedBuffered adds delta to the bytes held for paused connections.
func (g *readGauges) addPausedBuffered(delta int64) {
	if g != nil {
		g.buffered.Add(float64(delta))
	}
}
