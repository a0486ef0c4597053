package remoting

import "github.com/prometheus/client_golang/prometheus"

// replyMetrics are the series of replies clients have not read (part of
// Metrics):
//
//	popshim_remoting_reply_held_bytes{server}       gauge, reply bytes held for clients that have not read
//	    them (large replies not yet written, connections' outbound buffers as last seen; replyheld.go)
//	popshim_remoting_slow_reply_closed_total{server} counter, connections closed because their client read
//	    none of its replies for slowReplyGrace while the reply bound was reached
//	popshim_remoting_push_dropped_total{server}     counter, server-initiated oneway requests (Send: consumer
//	    ids changed, and the like) not sent because the client had not read earlier frames (push.go)
type replyMetrics struct {
	replyHeld   *prometheus.GaugeVec
	slowReply   *prometheus.CounterVec
	pushDropped *prometheus.CounterVec
}

func newReplyMetrics(constLabels prometheus.Labels) replyMetrics {
	return replyMetrics{
		replyHeld: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "popshim_remoting_reply_held_bytes", Help: "Reply bytes held for clients that have not read them: large replies not yet written, and connections' outbound buffers as last seen; POP and PULL read no messages while this reaches --reply-max-bytes.", ConstLabels: constLabels,
		}, []string{"server"}),
		slowReply: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "popshim_remoting_slow_reply_closed_total", Help: "Connections closed because their peer did not read its replies in time while the reply bound (--reply-max-bytes) was reached.", ConstLabels: constLabels,
		}, []string{"server"}),
		pushDropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "popshim_remoting_push_dropped_total", Help: "Server-initiated oneway requests not sent because the client had not read earlier frames.", ConstLabels: constLabels,
		}, []string{"server"}),
	}
}

// slowReplyClose counts a connection closed by the slow-reader scan.
func (m *Metrics) slowReplyClose(server string) {
	if m != nil {
		m.slowReply.WithLabelValues(server).Inc()
	}
}

// pushDrop counts a Send dropped for an unread backlog.
func (m *Metrics) pushDrop(server string) {
	if m != nil {
		m.pushDropped.WithLabelValues(server).Inc()
	}
}

// replyGauge resolves server's popshim_remoting_reply_held_bytes;
// nil when m is nil.
func (m *Metrics) replyGauge(server string) prometheus.Gauge {
	if m == nil {
		return nil
	}
	return m.replyHeld.WithLabelValues(server)
}
