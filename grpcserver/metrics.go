package grpcserver

import (
	"context"
	"path"
	"strings"
	"sync"
	"time"
	"unicode"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
)

// Metrics are the endpoint's Prometheus series. Create one with
// NewMetrics; a nil *Metrics records nothing. Safe for concurrent use.
//
//	rocketmq_rpc_latency{protocol_type="grpc",request_code,response_code,is_long_polling,result}
//	    the histogram remoting registers (milliseconds, remoting.Metrics.RPCLatency), shared so that both
//	    protocols are one series family: request_code is the RPC in snake case (query_route,
//	    receive_message, …), response_code the lower-case v2.Code of the answer's Status (ok,
//	    message_not_found, …; "none" when the call ended without one), is_long_polling true for
//	    ReceiveMessage, result success, or write_channel_failed when the call ended with a gRPC error
//	    (stream broken, client gone). Telemetry is not timed (it lives as long as its client).
//	popshim_grpc_connections                 gauge, open gRPC connections
//	popshim_grpc_connections_opened_total    counter, accepted gRPC connections
//	popshim_grpc_leases                      gauge, messages push consumers hold under auto-renew
//	popshim_grpc_lease_untracked_total       counter, auto-renewed deliveries beyond LeasePolicy.MaxPerClient
//	popshim_grpc_lease_renewals_total{result} counter, renewals: ok, failed, gave_up (the 3 h nack)
//	popshim_grpc_releases_total{result}      counter, messages made visible again (a receive that could not
//	    deliver them, a client gone, shutdown): ok, failed
//	popshim_grpc_reply_held_bytes            gauge, bytes of ReceiveMessage messages converted and not yet taken
//	    by grpc-go's write quota (counted against --reply-max-bytes, receive_room.go)
//	popshim_grpc_slow_receive_closed_total   counter, connections closed because a ReceiveMessage stream took
//	    none of its messages for 3 s while the reply bound was reached
type Metrics struct {
	latency   *prometheus.HistogramVec
	conns     prometheus.Gauge
	opened    prometheus.Counter
	leases    prometheus.Gauge
	untracked prometheus.Counter
	renewals  *prometheus.CounterVec
	releases  *prometheus.CounterVec
	replyHeld prometheus.Gauge
	slowRecv  prometheus.Counter
	// observers caches latency's children by latencyKey
	// (prometheus.Observer values).
	observers sync.Map
}

// NewMetrics creates the endpoint's own series with constLabels and
// registers them with reg; latency is the rocketmq_rpc_latency vector
// (labels protocol_type, request_code, response_code, is_long_polling,
// result) already registered by remoting, or nil for none. Errors:
// registration conflicts.
func NewMetrics(reg prometheus.Registerer, constLabels prometheus.Labels, latency *prometheus.HistogramVec) (*Metrics, error) {
	m := &Metrics{
		latency: latency,
		conns:   prometheus.NewGauge(prometheus.GaugeOpts{Name: "popshim_grpc_connections", Help: "Open gRPC connections.", ConstLabels: constLabels}),
		opened: prometheus.NewCounter(prometheus.CounterOpts{Name: "popshim_grpc_connections_opened_total",
			Help: "Accepted gRPC connections.", ConstLabels: constLabels}),
		leases: prometheus.NewGauge(prometheus.GaugeOpts{Name: "popshim_grpc_leases",
			Help: "Messages push consumers hold under auto-renew.", ConstLabels: constLabels}),
		untracked: prometheus.NewCounter(prometheus.CounterOpts{Name: "popshim_grpc_lease_untracked_total",
			Help: "Auto-renewed deliveries not tracked because their client held the maximum of leases.", ConstLabels: constLabels}),
		renewals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "popshim_grpc_lease_renewals_total",
			Help: "Lease renewals by result: ok, failed, gave_up.", ConstLabels: constLabels}, []string{"result"}),
		releases: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "popshim_grpc_releases_total",
			Help: "Messages made visible again by the gRPC endpoint, by result: ok, failed.", ConstLabels: constLabels}, []string{"result"}),
		replyHeld: prometheus.NewGauge(prometheus.GaugeOpts{Name: "popshim_grpc_reply_held_bytes",
			Help: "Bytes of ReceiveMessage messages converted and not yet taken by the stream's write quota.", ConstLabels: constLabels}),
		slowRecv: prometheus.NewCounter(prometheus.CounterOpts{Name: "popshim_grpc_slow_receive_closed_total",
			Help: "gRPC connections closed because a ReceiveMessage stream took none of its messages while the reply bound was reached.", ConstLabels: constLabels}),
	}
	for _, c := range []prometheus.Collector{m.conns, m.opened, m.leases, m.untracked, m.renewals, m.releases, m.replyHeld, m.slowRecv} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *Metrics) connOpened() {
	if m != nil {
		m.opened.Inc()
		m.conns.Inc()
	}
}

func (m *Metrics) connClosed() {
	if m != nil {
		m.conns.Dec()
	}
}

func (m *Metrics) leasesHeld(n int) {
	if m != nil {
		m.leases.Set(float64(n))
	}
}

func (m *Metrics) replyHeldAdd(n int64) {
	if m != nil {
		m.replyHeld.Add(float64(n))
	}
}

func (m *Metrics) slowReceiveClosed() {
	if m != nil {
		m.slowRecv.Inc()
	}
}

func (m *Metrics) leaseUntracked() {
	if m != nil {
		m.untracked.Inc()
	}
}

func (m *Metrics) renewed(gaveUp, ok bool) {
	if m == nil {
		return
	}
	switch {
	case gaveUp:
		m.renewals.WithLabelValues("gave_up").Inc()
	case ok:
		m.renewals.WithLabelValues("ok").Inc()
	default:
		m.renewals.WithLabelValues("failed").Inc()
	}
}

func (m *Metrics) released(ok bool) {
	if m == nil {
		return
	}
	if ok {
		m.releases.WithLabelValues("ok").Inc()
	} else {
		m.releases.WithLabelValues("failed").Inc()
	}
}

// observe records one call's latency.
func (m *Metrics) observe(method string, code v2.Code, hasCode bool, err error, started time.Time) {
	if m == nil || m.latency == nil {
		return
	}
	m.observer(latencyKey{method: method, code: code, hasCode: hasCode, failed: err != nil}).
		Observe(float64(time.Since(started).Microseconds()) / 1000)
}

// latencyKey is what decides the labels of one call's latency sample.
type latencyKey struct {
	method          string // grpc-go's full method name
	code            v2.Code
	hasCode, failed bool
}

// observer returns the histogram child of k's labels. The children are
// kept in m.observers (a handful per RPC), so a call does not build its
// label strings and hash them again (rpcName, the lower-case code name,
// the vector's label hash).
func (m *Metrics) observer(k latencyKey) prometheus.Observer {
	if o, ok := m.observers.Load(k); ok {
		return o.(prometheus.Observer)
	}
	resp := "none"
	if k.hasCode {
		resp = strings.ToLower(k.code.String())
	}
	result := "success"
	if k.failed {
		result = "write_channel_failed"
	}
	name := rpcName(k.method)
	o := m.latency.WithLabelValues("grpc", name, resp, boolLabel(name == "receive_message"), result)
	m.observers.Store(k, o)
	return o
}

func boolLabel(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// rpcName turns "/apache.rocketmq.v2.MessagingService/QueryRoute" into
// "query_route".
func rpcName(full string) string {
	base := path.Base(full)
	var b strings.Builder
	for i, r := range base {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// statusCarrier is every unary response type (they all have a Status).
type statusCarrier interface{ GetStatus() *v2.Status }

// unaryInterceptor records the client on the connection and the call's
// latency.
func (s *service) unaryInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	started := time.Now()
	s.attachClient(ctx, ClientIDOf(ctx))
	resp, err := handler(ctx, req)
	var code v2.Code
	sc, ok := resp.(statusCarrier)
	if ok && sc.GetStatus() != nil {
		code = sc.GetStatus().GetCode()
	}
	s.metrics.observe(info.FullMethod, code, ok && sc.GetStatus() != nil, err, started)
	return resp, err
}

// streamInterceptor records the client on the connection and, for
// ReceiveMessage, the call's latency with the Status it wrote.
func (s *service) streamInterceptor(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	started := time.Now()
	s.attachClient(ss.Context(), ClientIDOf(ss.Context()))
	if !info.IsServerStream || info.IsClientStream {
		return handler(srv, ss) // Telemetry
	}
	w := &statusSpy{ServerStream: ss}
	err := handler(srv, w)
	s.metrics.observe(info.FullMethod, w.code, w.seen, err, started)
	return err
}

// statusSpy remembers the first Status a ReceiveMessage stream wrote.
type statusSpy struct {
	grpc.ServerStream
	code v2.Code
	seen bool
}

// SendMsg implements grpc.ServerStream.
func (w *statusSpy) SendMsg(m any) error {
	if r, ok := m.(*v2.ReceiveMessageResponse); ok && !w.seen && r.GetStatus() != nil {
		w.code, w.seen = r.GetStatus().GetCode(), true
	}
	return w.ServerStream.SendMsg(m)
}
