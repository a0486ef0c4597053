package clients

// The HEART_BEAT fast path's memory (see handler/heart_beat.go): per connection, the
// last heartbeat accepted on it, so a byte-identical repeat is served
// without decoding its JSON body or planning its registration again.

import (
	"bytes"
	"sync"

	"github.com/popshim/popshim/codec"
)

// MaxCachedHeartbeatBytes bounds the heartbeat body remembered per
// connection (8 KiB; a Java client with a few groups sends well under
// 2 KiB). A larger heartbeat always takes the full path and leaves nothing
// behind, so the cache holds at most this much body per open connection.
const MaxCachedHeartbeatBytes = 8 << 10

// AcceptedHeartbeat is the last heartbeat accepted on one connection:
// an owned copy of its body, the remoting header fields that went into its
// ClientChannel (language, version), the registration planned from it (its
// Channel carries the connection, clientID and remote address; its
// LastUpdateMillis is unused) and what the plan skipped. Immutable once
// stored, so any goroutine holding the pointer may read it.
type AcceptedHeartbeat struct {
	body     []byte
	language string
	version  int32
	Reg      Heartbeat
	Skipped  SkippedEntries
}

// HeartbeatCache maps connection IDs (remoting Conn.ID) to the last
// heartbeat accepted on that connection. The handler only reads and writes
// its own connection's entry, and every gnet event loop may run handlers,
// so the map is guarded by mu; entries are replaced, never modified.
// The broker's connection-close hook (handler.Broker.onConnClose) drops
// a closed connection's entry with Forget. Every method is safe on any
// goroutine, the event loops included.
type HeartbeatCache struct {
	mu     sync.Mutex
	byConn map[uint64]*AcceptedHeartbeat
	// remembered counts remember calls, i.e. heartbeats that took the full
	// path and were accepted (tests tell the two paths apart by it).
	remembered int
}

// NewHeartbeatCache returns an empty cache.
func NewHeartbeatCache() *HeartbeatCache {
	return &HeartbeatCache{byConn: make(map[uint64]*AcceptedHeartbeat)}
}

// Match returns the heartbeat remembered for connID when req repeats it
// byte for byte (body, language and version), or nil.
func (hc *HeartbeatCache) Match(connID uint64, req *codec.Command) *AcceptedHeartbeat {
	hc.mu.Lock()
	e := hc.byConn[connID]
	hc.mu.Unlock()
	if e == nil || e.version != req.Version || e.language != req.Language || !bytes.Equal(e.body, req.Body) {
		return nil
	}
	return e
}

// Remember records reg, planned from req and registered over connID, as the
// connection's last accepted heartbeat. A body above
// MaxCachedHeartbeatBytes forgets the connection's entry instead. reg's
// subscriptions are normalized (normalizeSubscriptions) in the copy kept.
func (hc *HeartbeatCache) Remember(connID uint64, req *codec.Command, reg Heartbeat, skipped SkippedEntries) {
	if len(req.Body) > MaxCachedHeartbeatBytes {
		hc.mu.Lock()
		delete(hc.byConn, connID)
		hc.remembered++
		hc.mu.Unlock()
		return
	}
	e := &AcceptedHeartbeat{body: bytes.Clone(req.Body), language: req.Language, version: req.Version,
		Reg: reg, Skipped: skipped}
	e.Reg.Consumers = make([]ConsumerRegistration, len(reg.Consumers))
	for i, cr := range reg.Consumers {
		cr.Subscriptions = normalizeSubscriptions(cr.Subscriptions)
		e.Reg.Consumers[i] = cr
	}
	hc.mu.Lock()
	hc.byConn[connID] = e
	hc.remembered++
	hc.mu.Unlock()
}

// Forget drops connID's entry, if any.
func (hc *HeartbeatCache) Forget(connID uint64) {
	hc.mu.Lock()
	delete(hc.byConn, connID)
	hc.mu.Unlock()
}

// Stats returns the number of connections with an entry and the
// remembered count (tests).
func (hc *HeartbeatCache) Stats() (entries, remembered int) {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	return len(hc.byConn), hc.remembered
}

// normalizeSubscriptions returns subs with one entry per topic, the last
// one of each (what putConsumerLocked keeps), in first-seen order: subs
// itself when its topics are already distinct, else a new slice.
// ClientTable.RefreshHeartbeat relies on distinct topics to compare a
// group's subscriptions with a registration without building a map.
func normalizeSubscriptions(subs []Subscription) []Subscription {
	seen := make(map[string]int, len(subs))
	dup := false
	for _, s := range subs {
		if _, ok := seen[s.Topic]; ok {
			dup = true
		}
		seen[s.Topic] = 0
	}
	if !dup {
		return subs
	}
	clear(seen)
	out := make([]Subscription, 0, len(subs))
	for _, s := range subs {
		if i, ok := seen[s.Topic]; ok {
			out[i] = s
			continue
		}
		seen[s.Topic] = len(out)
		out = append(out, s)
	}
	return out
}
