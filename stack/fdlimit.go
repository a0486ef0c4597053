package stack

import (
	"math"

	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"

	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/remoting"
)

// Fitting --max-conns to the descriptor limit.
//
// Every remoting connection holds a file descriptor (a TLS connection
// three: the client socket and both ends of its socketpair,
// remoting/tls_session.go), and so does every RocksDB file (the store
// keeps every SST open), commit-log segment, WAL, gRPC and /metrics
// connection, and each event loop's epoll and eventfd. When the process
// runs out, accept(2) fails with EMFILE (the listener then backs off,
// remoting/accept.go) and so does RocksDB's next file open. So when the
// listeners' --max-conns, times the descriptors a connection holds, plus a
// reserve for everything else, exceed the soft RLIMIT_NOFILE (the Go
// runtime raises it to the hard limit at start), each remoting listener
// gets an equal share of what the reserve leaves, and StartStack logs one
// warning with the numbers. The reserve is an eighth of the limit, at
// least minFDReserve. The gRPC listener counts as one more listener and
// accepts at most the same share (netutil.LimitListener: connections past
// it wait in the kernel's queue), and /metrics at most metricsMaxConns,
// taken from the reserve: a flood of idle connections to either port
// used to take the descriptors RocksDB needs for its next WAL or table
// file, and every SEND failed until it ended (found from outside,
// 2026-12-06). A disabled bound (--max-conns=0) stays disabled, for gRPC
// too.

// minFDReserve is the fewest descriptors kept out of the listeners' share.
const minFDReserve = 64

// metricsMaxConns bounds the connections the /metrics listener serves at
// once (Prometheus scrapes with one or two).
const metricsMaxConns = 16

// fdReserveDivisor: the reserve is the limit divided by it (or
// minFDReserve, whichever is more).
const fdReserveDivisor = 8

// tlsConnDescriptors is what one TLS connection holds (client socket,
// both socketpair ends); a plaintext one holds one.
const tlsConnDescriptors = 3

// connLimit is --max-conns fitted to the descriptor limit, per remoting
// listener.
type connLimit struct {
	nofile    uint64 // soft RLIMIT_NOFILE; 0 = unknown or unlimited (no clamp)
	reserve   int    // descriptors kept for everything but remoting connections
	listeners int    // remoting listeners that share the rest
	perConn   int    // descriptors one connection holds
	asked     int    // per-listener bound asked for (remoting spelling: negative = none)
	effective int    // per-listener bound to use: asked, or lower when clamped
}

// clamped reports whether the effective bound is below the asked one.
func (l connLimit) clamped() bool { return l.effective != l.asked }

// fitConnLimit returns the per-listener bound for asked (negative: no
// bound, returned as it is) when listeners listeners whose connections
// hold perConn descriptors each share nofile descriptors less the
// reserve. nofile 0 or beyond math.MaxInt means no clamp. The effective
// bound is at least 1.
func fitConnLimit(nofile uint64, asked, listeners, perConn int) connLimit {
	l := connLimit{nofile: nofile, asked: asked, effective: asked, listeners: max(listeners, 1), perConn: max(perConn, 1)}
	if asked <= 0 || nofile == 0 || nofile > math.MaxInt {
		return l
	}
	n := int(nofile)
	l.reserve = max(minFDReserve, n/fdReserveDivisor)
	share := max((n-l.reserve)/(l.listeners*l.perConn), 1)
	l.effective = min(asked, share)
	return l
}

// nofileLimit is the process's soft RLIMIT_NOFILE, 0 when it cannot be
// read or is unlimited.
func nofileLimit() uint64 {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil || rl.Cur == unix.RLIM_INFINITY {
		return 0
	}
	return rl.Cur
}

// brokerConnLimit fits the --max-conns of the listeners cfg starts
// (broker, the name server's when it has its own port, gRPC when
// grpc; maxConns in remoting's spelling) to this process's descriptor
// limit, and logs a warning when it lowered it. StartStack's goroutine.
func brokerConnLimit(cfg *conf.Config, maxConns int, ownNamesrv, grpc bool, log zerolog.Logger) int {
	listeners, perConn := 1, 1
	if ownNamesrv {
		listeners++
	}
	if grpc {
		listeners++
	}
	if cfg.TLS.TLSMode() != remoting.TLSDisabled {
		perConn = tlsConnDescriptors
	}
	l := fitConnLimit(nofileLimit(), maxConns, listeners, perConn)
	if l.clamped() {
		log.Warn().Uint64("rlimit_nofile", l.nofile).Int("reserve", l.reserve).Int("listeners", l.listeners).
			Int("descriptors_per_conn", l.perConn).Int("max_conns", l.asked).Int("effective_max_conns", l.effective).
			Msg("--max-conns lowered to fit the open-file limit: listeners × max_conns × descriptors_per_conn + reserve must not exceed it; raise it (ulimit -n, systemd LimitNOFILE=) to allow more")
	}
	return l.effective
}
