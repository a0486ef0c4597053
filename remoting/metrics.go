package remoting

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/popshim/popshim/codec"
)

// rpcResult is the result label of rocketmq_rpc_latency (Java's
// RemotingMetricsConstant); resultNames holds its label values.
type rpcResult uint8

const (
	resultSuccess rpcResult = iota
	resultOneway
	resultWriteChannelFailed
)

var resultNames = [...]string{
	resultSuccess:            "success",
	resultOneway:             "oneway",
	resultWriteChannelFailed: "write_channel_failed",
}

// Metrics holds the remoting instruments. Create one per process with
// NewMetrics and share it between servers; all methods are safe for
// concurrent use. A nil *Metrics records nothing.
//
// Series (names follow ../shared metrics conventions where the meaning
// matches a Java broker metric):
//
//	rocketmq_rpc_latency{protocol_type,request_code,response_code,is_long_polling,result}
//	    histogram, milliseconds, from dispatch to Reply; buckets 1,3,5,7,10,100,1000,2000,3000
//	popshim_remoting_connections{server}                gauge, open connections
//	popshim_remoting_connections_opened_total{server}   counter, accepted connections
//	popshim_remoting_malformed_frames_total{server,reason} counter, connections closed for a bad frame
//	popshim_remoting_idle_closed_total{server}          counter, connections closed by the idle timeout
//	popshim_remoting_connections_refused_total{server}  counter, connections closed at accept by ServerOptions.MaxConns
//	popshim_remoting_accept_errors_total{server,reason} counter, failed accepts (reason emfile, enfile, enobufs,
//	    enomem, other), each followed by a back-off pause (accept.go)
//	popshim_remoting_reply_flush_seconds                histogram, seconds, from handing queued replies to
//	    gnet (AsyncWritev, any goroutine) until its write callback ran on the event loop: the event loop's
//	    wake-up and the write(2) of the replies; replies sent directly are not in it
//	popshim_remoting_direct_replies_total{server}       counter, replies sent by the replying goroutine
//	    itself, without the event loop (direct.go)
//	popshim_remoting_tls_connections_total{server,result} counter, connections whose first byte was a TLS
//	    handshake (result handshake_ok, handshake_failed) or plaintext refused by TLSEnforcing (plaintext_refused)
//	popshim_remoting_read_inflight_bytes{server}        gauge, bytes, read budget held by large frames being
//	    read or decoded and not answered (bounded by ServerOptions.MaxReadBytes)
//	popshim_remoting_read_paused_connections{server}    gauge, connections whose reads are paused
//	popshim_remoting_read_paused_buffered_bytes{server} gauge, bytes gnet holds for paused connections
//	popshim_remoting_read_pauses_total{server}          counter, times a connection's reads were paused
//	popshim_remoting_reply_held_bytes, popshim_remoting_slow_reply_closed_total,
//	popshim_remoting_push_dropped_total: metrics_reply.go
//
// request_code and response_code are the lower-case Java constant names
// (pop_message, system_busy), as RemotingHelper.getRequestCodeDesc gives. A
// request code RequestCode.java does not define is labelled with its number,
// as Java does, for the first MaxUnnamedRequestCodes distinct such codes;
// later ones become "unknown", so a client sending random codes cannot grow
// the series count without bound. A response code popshim cannot name
// (never sent by popshim's own handlers) is "unknown".
type Metrics struct {
	rpcLatency   *prometheus.HistogramVec
	conns        *prometheus.GaugeVec
	opened       *prometheus.CounterVec
	malformed    *prometheus.CounterVec
	idleClosed   *prometheus.CounterVec
	slowClosed   *prometheus.CounterVec
	refused      *prometheus.CounterVec
	acceptErrs   *prometheus.CounterVec
	flush        prometheus.Histogram
	direct       *prometheus.CounterVec
	tlsConns     *prometheus.CounterVec
	readBytes    *prometheus.GaugeVec
	readPaused   *prometheus.GaugeVec
	readBuffed   *prometheus.GaugeVec
	readPauses   *prometheus.CounterVec
	replyMetrics // metrics_reply.go

	reqNames  map[int32]string // read-only after NewMetrics
	respNames map[int32]string // read-only after NewMetrics

	// unnamed holds the request codes without a Java name that were given a
	// numeric label (at most MaxUnnamedRequestCodes); copy-on-write under
	// observersMu like observers.
	unnamed atomic.Pointer[map[int32]struct{}]

	// observers caches the histogram child of each label set, keyed by
	// observerKey. The map is never written once published: a new label set
	// copies it under observersMu and publishes the copy, so the per-reply
	// lookup is one atomic load and one map read, with no lock, no hashing
	// of strings and no allocation.
	observers   atomic.Pointer[map[uint64]prometheus.Observer]
	observersMu sync.Mutex
}

// MaxUnnamedRequestCodes bounds how many distinct request codes without a
// RequestCode.java name get their own request_code label (their number).
const MaxUnnamedRequestCodes = 32

// observerKey packs one rocketmq_rpc_latency label set: request code (high
// 32 bits), response code (next 24 bits, -1 = unknown), long polling (bit
// 7) and result (bits 0-6). Codes were already folded to -1 when unknown,
// and every known response code fits in 24 bits.
func observerKey(req, resp int32, longPoll bool, result rpcResult) uint64 {
	k := uint64(uint32(req))<<32 | uint64(uint32(resp)&0xFFFFFF)<<8 | uint64(result)
	if longPoll {
		k |= 1 << 7
	}
	return k
}

// NewMetrics creates the instruments with constLabels on every series
// (cluster, node_type, node_id in a broker) and registers them with reg.
// It returns the registration error, e.g. when called twice on one registry.
func NewMetrics(reg prometheus.Registerer, constLabels prometheus.Labels) (*Metrics, error) {
	m := &Metrics{
		rpcLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:        "rocketmq_rpc_latency",
			Help:        "Remoting request latency in milliseconds, from dispatch to the reply being queued.",
			Buckets:     []float64{1, 3, 5, 7, 10, 100, 1000, 2000, 3000},
			ConstLabels: constLabels,
		}, []string{"protocol_type", "request_code", "response_code", "is_long_polling", "result"}),
		conns: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "popshim_remoting_connections", Help: "Open remoting connections.", ConstLabels: constLabels,
		}, []string{"server"}),
		opened: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "popshim_remoting_connections_opened_total", Help: "Accepted remoting connections.", ConstLabels: constLabels,
		}, []string{"server"}),
		malformed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "popshim_remoting_malformed_frames_total", Help: "Connections closed because of a malformed or too large frame.", ConstLabels: constLabels,
		}, []string{"server", "reason"}),
		idleClosed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "popshim_remoting_idle_closed_total", Help: "Connections closed by the idle timeout.", ConstLabels: constLabels,
		}, []string{"server"}),
		slowClosed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "popshim_remoting_slow_frame_closed_total", ConstLabels: constLabels,
			Help: "Connections closed because a large frame they held read budget for arrived too slowly while others waited for it.",
		}, []string{"server"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "popshim_remoting_connections_refused_total", Help: "Connections closed at accept because the server's connection limit (--max-conns) was reached.", ConstLabels: constLabels,
		}, []string{"server"}),
		acceptErrs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "popshim_remoting_accept_errors_total", ConstLabels: constLabels,
			Help: "Connections that could not be accepted (reason: emfile and enfile = out of file descriptors, enobufs, enomem, other); the listener pauses and retries.",
		}, []string{"server", "reason"}),
		flush: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "popshim_remoting_reply_flush_seconds", ConstLabels: constLabels,
			Help:    "From handing queued replies to the event loop (AsyncWritev) until they were written, seconds: the loop's wake-up and write(2).",
			Buckets: prometheus.ExponentialBuckets(5e-6, 1.5, 28), // 5 µs … 0.28 s
		}),
		direct: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "popshim_remoting_direct_replies_total", Help: "Replies sent by the replying goroutine itself, without waking the event loop (the request was the last one owed on its connection).", ConstLabels: constLabels,
		}, []string{"server"}),
		tlsConns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "popshim_remoting_tls_connections_total", Help: "Connections by TLS outcome: handshake_ok, handshake_failed, plaintext_refused (--tls-mode=enforcing).", ConstLabels: constLabels,
		}, []string{"server", "result"}),
		readBytes: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "popshim_remoting_read_inflight_bytes", Help: "Read budget held by large frames being read or decoded and not answered, bytes (bounded by --read-max-bytes).", ConstLabels: constLabels,
		}, []string{"server"}),
		readPaused: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "popshim_remoting_read_paused_connections", Help: "Connections whose reads are paused until the read budget has room for their next large frame.", ConstLabels: constLabels,
		}, []string{"server"}),
		readBuffed: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "popshim_remoting_read_paused_buffered_bytes", Help: "Bytes already read from paused connections and held in their inbound buffers.", ConstLabels: constLabels,
		}, []string{"server"}),
		readPauses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "popshim_remoting_read_pauses_total", Help: "Times a connection's reads were paused for the read budget.", ConstLabels: constLabels,
		}, []string{"server"}),
		replyMetrics: newReplyMetrics(constLabels),
		reqNames:     make(map[int32]string),
		respNames:    make(map[int32]string),
	}
	for _, c := range codec.RequestCodes() {
		m.reqNames[c] = strings.ToLower(codec.RequestName(c))
	}
	for _, e := range codec.ResponseCodes() {
		m.respNames[e.Code] = strings.ToLower(e.Name)
	}
	for _, c := range []prometheus.Collector{m.rpcLatency, m.conns, m.opened, m.malformed, m.idleClosed, m.slowClosed, m.refused, m.acceptErrs, m.flush, m.direct, m.tlsConns,
		m.readBytes, m.readPaused, m.readBuffed, m.readPauses, m.replyHeld, m.slowReply, m.pushDropped} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// observeRPC records one reply. A request code without a Java name keeps
// its number up to MaxUnnamedRequestCodes distinct codes, then folds into
// "unknown"; an unnamed response code folds into "unknown".
func (m *Metrics) observeRPC(reqCode, respCode int32, longPoll bool, result rpcResult, d time.Duration) {
	if m == nil {
		return
	}
	if _, ok := m.reqNames[reqCode]; !ok && !m.admitUnnamed(reqCode) {
		reqCode = -1
	}
	if _, ok := m.respNames[respCode]; !ok {
		respCode = -1
	}
	key := observerKey(reqCode, respCode, longPoll, result)
	var o prometheus.Observer
	if cache := m.observers.Load(); cache != nil {
		o = (*cache)[key]
	}
	if o == nil {
		o = m.addObserver(key, reqCode, respCode, longPoll, result)
	}
	o.Observe(float64(d) / float64(time.Millisecond))
}

// admitUnnamed reports whether the unnamed request code gets a numeric
// label: true when it already has one or fewer than MaxUnnamedRequestCodes
// codes have one. Any goroutine.
func (m *Metrics) admitUnnamed(code int32) bool {
	if set := m.unnamed.Load(); set != nil {
		if _, ok := (*set)[code]; ok {
			return true
		}
		if len(*set) >= MaxUnnamedRequestCodes {
			return false
		}
	}
	m.observersMu.Lock()
	defer m.observersMu.Unlock()
	old := m.unnamed.Load()
	next := make(map[int32]struct{}, 1)
	if old != nil {
		if _, ok := (*old)[code]; ok {
			return true
		}
		if len(*old) >= MaxUnnamedRequestCodes {
			return false
		}
		for k := range *old {
			next[k] = struct{}{}
		}
	}
	next[code] = struct{}{}
	m.unnamed.Store(&next)
	return true
}

// addObserver resolves the histogram child for a label set seen for the
// first time and publishes a copy of the cache that holds it.
func (m *Metrics) addObserver(key uint64, reqCode, respCode int32, longPoll bool, result rpcResult) prometheus.Observer {
	m.observersMu.Lock()
	defer m.observersMu.Unlock()
	old := m.observers.Load()
	if old != nil {
		if o, ok := (*old)[key]; ok {
			return o
		}
	}
	o := m.rpcLatency.WithLabelValues("remoting",
		requestLabel(m.reqNames, reqCode), nameOr(m.respNames, respCode), boolLabel(longPoll), resultNames[result])
	next := make(map[uint64]prometheus.Observer, 1)
	if old != nil {
		next = make(map[uint64]prometheus.Observer, len(*old)+1)
		for k, v := range *old {
			next[k] = v
		}
	}
	next[key] = o
	m.observers.Store(&next)
	return o
}

// directCounter is the direct-reply counter of server, nil without metrics.
// Called once per Server (NewServer).
func (m *Metrics) directCounter(server string) prometheus.Counter {
	if m == nil {
		return nil
	}
	return m.direct.WithLabelValues(server)
}

// observeFlush records one reply flush that took d.
func (m *Metrics) observeFlush(d time.Duration) {
	if m != nil {
		m.flush.Observe(d.Seconds())
	}
}

// connOpened counts an open connection. accepted is false for the
// plaintext side of a TLS connection (tls_session.go), whose TCP accept was
// counted already.
func (m *Metrics) connOpened(server string, accepted bool) {
	if m != nil {
		if accepted {
			m.opened.WithLabelValues(server).Inc()
		}
		m.conns.WithLabelValues(server).Inc()
	}
}

func (m *Metrics) connClosed(server string) {
	if m != nil {
		m.conns.WithLabelValues(server).Dec()
	}
}

func (m *Metrics) malformedFrame(server, reason string) {
	if m != nil {
		m.malformed.WithLabelValues(server, reason).Inc()
	}
}

func (m *Metrics) idleClose(server string) {
	if m != nil {
		m.idleClosed.WithLabelValues(server).Inc()
	}
}

func (m *Metrics) slowClose(server string) {
	if m != nil {
		m.slowClosed.WithLabelValues(server).Inc()
	}
}

func (m *Metrics) connRefused(server string) {
	if m != nil {
		m.refused.WithLabelValues(server).Inc()
	}
}

// acceptError counts a failed accept or enrollment; reason is
// acceptErrReason's label. Accept goroutine.
func (m *Metrics) acceptError(server, reason string) {
	if m != nil {
		m.acceptErrs.WithLabelValues(server, reason).Inc()
	}
}

// TLS outcomes, the result label of popshim_remoting_tls_connections_total.
const (
	tlsHandshakeOK      = "handshake_ok"
	tlsHandshakeFailed  = "handshake_failed"
	tlsPlaintextRefused = "plaintext_refused"
)

func (m *Metrics) tlsConn(server, result string) {
	if m != nil {
		m.tlsConns.WithLabelValues(server, result).Inc()
	}
}

func nameOr(names map[int32]string, code int32) string {
	if n, ok := names[code]; ok {
		return n
	}
	return "unknown"
}

// requestLabel is the request_code label: the lower-case Java name, the
// number of an admitted unnamed code, or "unknown" for the folded -1.
func requestLabel(names map[int32]string, code int32) string {
	if n, ok := names[code]; ok {
		return n
	}
	if code == -1 {
		return "unknown"
	}
	return strconv.Itoa(int(code))
}

func boolLabel(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
