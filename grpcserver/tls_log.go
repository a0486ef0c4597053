package grpcserver

import (
	"net"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// mismatchLog writes the warn line of a connection refused for speaking
// the wrong protocol for --tls-mode (TLS to a plaintext port, plaintext to
// an enforcing one): at most one line a second, the next line counting
// the ones left out, so a client retrying in a loop cannot flood the log.
// A nil *mismatchLog logs nothing. Any goroutine.
type mismatchLog struct {
	log zerolog.Logger

	mu         sync.Mutex
	last       time.Time // REQUIRES: mu held. When the last line was written.
	suppressed int       // REQUIRES: mu held. Lines left out since then.
}

// warn logs msg for the connection from peer, unless a line was written
// less than a second ago.
func (m *mismatchLog) warn(peer net.Addr, msg string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	now := time.Now()
	if !m.last.IsZero() && now.Sub(m.last) < time.Second {
		m.suppressed++
		m.mu.Unlock()
		return
	}
	n := m.suppressed
	m.last, m.suppressed = now, 0
	m.mu.Unlock()
	ev := m.log.Warn().Str("remote", peer.String())
	if n > 0 {
		ev = ev.Int("suppressed", n)
	}
	ev.Msg(msg)
}
