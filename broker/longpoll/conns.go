package longpoll

import (
	"sync"
	"time"
)

// recentClosedConns is how many closed connection ids connPolls remembers,
// to catch a request parked just after its connection closed.
const recentClosedConns = 4096

// connPolls indexes parked polls by the connection that sent them, so that
// the polls of a closed connection are released at once (remoting's OnClose
// hook) instead of holding a registry slot and a timer until their
// deadline. Sharded into stripes by connection id.
//
// A close racing with a park: dropConn first records the id as closed, then
// takes the connection's polls; park first indexes its poll, then checks
// the id. Whichever comes second sees the other, so no poll of a closed
// connection stays parked (as long as fewer than recentClosedConns
// connections close meanwhile; beyond that the poll waits for its deadline,
// as before).
type connPolls struct {
	stripes [stripeCount]connStripe

	mu     sync.RWMutex        // guards closed, ring, next
	closed map[uint64]struct{} // the ids in ring
	ring   [recentClosedConns]uint64
	next   int
}

type connStripe struct {
	mu    sync.Mutex
	polls map[uint64]map[*Poll]struct{} // REQUIRES: mu held
}

func (c *connPolls) stripe(connID uint64) *connStripe {
	return &c.stripes[connID%stripeCount]
}

// add indexes p under p.connID and reports false when that connection has
// already closed (the caller then releases p itself).
func (c *connPolls) add(p *Poll) bool {
	s := c.stripe(p.ConnID)
	s.mu.Lock()
	if s.polls == nil {
		s.polls = make(map[uint64]map[*Poll]struct{})
	}
	set := s.polls[p.ConnID]
	if set == nil {
		set = make(map[*Poll]struct{})
		s.polls[p.ConnID] = set
	}
	set[p] = struct{}{}
	s.mu.Unlock()
	return !c.isClosed(p.ConnID)
}

// remove drops p from the index (no-op when absent).
func (c *connPolls) remove(p *Poll) {
	s := c.stripe(p.ConnID)
	s.mu.Lock()
	if set := s.polls[p.ConnID]; set != nil {
		delete(set, p)
		if len(set) == 0 {
			delete(s.polls, p.ConnID)
		}
	}
	s.mu.Unlock()
}

func (c *connPolls) isClosed(connID uint64) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.closed[connID]
	return ok
}

// markClosed records connID as closed and returns the polls indexed under
// it, removing them from the index.
func (c *connPolls) markClosed(connID uint64) []*Poll {
	c.mu.Lock()
	if c.closed == nil {
		c.closed = make(map[uint64]struct{}, recentClosedConns)
	}
	if old := c.ring[c.next]; old != 0 {
		delete(c.closed, old)
	}
	c.ring[c.next] = connID
	c.next = (c.next + 1) % recentClosedConns
	c.closed[connID] = struct{}{}
	c.mu.Unlock()

	s := c.stripe(connID)
	s.mu.Lock()
	set := s.polls[connID]
	delete(s.polls, connID)
	s.mu.Unlock()
	out := make([]*Poll, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	return out
}

// DropConn releases every poll parked by connection connID without
// answering it (the connection is gone): registry slots and timers are
// freed now. Called from the remoting OnClose hook on the connection's
// event loop; never blocks beyond short mutexes. Returns how many polls it
// released.
func (r *Registry) DropConn(connID uint64) int {
	n := 0
	for _, p := range r.conns.markClosed(connID) {
		if r.claim(p, false) {
			if p.OnDrop != nil {
				p.OnDrop()
			}
			n++
		}
	}
	return n
}

// ConnGone reports whether connection connID (0: none, false) has closed
// (DropConn), as far as the last recentClosedConns closes tell. A POP or
// PULL that waited in the reader pool's queue while its connection closed
// looks before it reads, so it takes no message for a client that is gone
// (it used to run once, and its messages stayed invisible until
// invisibleTime). Any goroutine.
func (r *Registry) ConnGone(connID uint64) bool {
	return connID != 0 && r.conns.isClosed(connID)
}

// Wait holds p for d without registering its Keys and without counting it
// as parked (it takes no slot of --max-parked-polls): p.OnExpire runs once
// d has passed, unless p's connection closes first, when DropConn releases
// p at once and runs p.OnDrop (if set) instead, through the same index as
// a parked poll. For a request that waits for time, not messages: a POP or
// PULL waiting for reply room (broker/reply_room.go). p.DeadlineMillis and
// p.OnWake are not used. It returns false, running neither, when the
// registry is closed (answer now). Any goroutine; never blocks beyond
// short mutexes.
func (r *Registry) Wait(p *Poll, d time.Duration) bool {
	if r.closed.Load() {
		return false
	}
	p.waitOnly = true
	if p.ConnID != 0 && !r.conns.add(p) {
		// Closed before or while it was being indexed (see connPolls).
		if r.claim(p, false) && p.OnDrop != nil {
			p.OnDrop()
		}
		return true
	}
	p.mu.Lock()
	if !p.done.Load() { // else DropConn claimed it meanwhile
		p.timer = time.AfterFunc(d, func() { r.expire(p) })
	}
	p.mu.Unlock()
	return true
}
