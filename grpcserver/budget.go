package grpcserver

import "sync/atomic"

// sendBudget bounds the bytes of decoded SendMessage requests the endpoint
// holds at once (Config.MaxSendInflightBytes): a request is counted at its
// proto.Size from right after grpc-go decoded it until its handler
// returns. A request that does not fit is answered TOO_MANY_REQUESTS at
// once (the v5 clients back off and retry on it) instead of waiting, so
// the bytes held stay near the bound however many connections and streams
// send. A request is admitted whatever its size when nothing is held, so
// one request up to Config.MaxRecvMsgBytes always gets through. The zero
// value (limit 0) bounds nothing. Any goroutine.
type sendBudget struct {
	limit int64 // bytes; <= 0: no bound
	held  atomic.Int64
}

// acquire reserves n bytes and reports whether the request may proceed;
// on true the caller must release(n) when it is done.
func (b *sendBudget) acquire(n int64) bool {
	if b.limit <= 0 {
		return true
	}
	for {
		h := b.held.Load()
		if h > 0 && h+n > b.limit {
			return false
		}
		if b.held.CompareAndSwap(h, h+n) {
			return true
		}
	}
}

// release returns n bytes acquire reserved.
func (b *sendBudget) release(n int64) {
	if b.limit > 0 {
		b.held.Add(-n)
	}
}

// HeldSendBytes returns the bytes of SendMessage requests the endpoint
// holds now: decoded ones (Config.MaxSendInflightBytes), and a bound of
// those being read or waiting to be read (readGate.heldBytes); 0 when
// unbounded. The process's soft memory limit subtracts them from the live
// heap (stack/memlimit.go). Any goroutine.
func (s *Server) HeldSendBytes() int64 {
	return s.svc.sendHeld.held.Load() + s.svc.reads.heldBytes()
}
