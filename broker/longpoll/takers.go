package longpoll

import "sync"

// takerTable holds the POP requests that are being served, from arrival
// until answered (queued for a reader, running, or parked), by the keys
// they read: wantsOf counts them as takers of the messages their filter
// matches, so a peer POP of the same group scanning meanwhile leaves those
// messages alone instead of skipping them and committing the consume
// offset past them. Each request is one parkedPoll stand-in (popJob.taker;
// only keys, group and filter are used).
//
// Its mutexes are its own: the event loop registers a request on arrival,
// and must never wait on a lock the writer goroutine holds, as pollStripe's
// are while the writer's append listener wakes polls.
type takerTable struct {
	stripes [stripeCount]takerStripe
}

// stripe returns the stripe that holds topic's keys.
func (t *takerTable) stripe(topic string) *takerStripe { return &t.stripes[stripeOf(topic)] }

type takerStripe struct {
	mu  sync.Mutex
	set map[Key]map[*Poll]struct{} // REQUIRES: mu held
}

// add registers p under each of its keys. Requests without a group (PULL,
// NOTIFICATION) take nothing from each other and are not registered. Any
// goroutine, including the event loop.
func (t *takerTable) add(p *Poll) {
	if p.Group == "" {
		return
	}
	for _, k := range p.Keys {
		s := t.stripe(k.Topic)
		s.mu.Lock()
		if s.set == nil {
			s.set = make(map[Key]map[*Poll]struct{})
		}
		ps := s.set[k]
		if ps == nil {
			ps = make(map[*Poll]struct{})
			s.set[k] = ps
		}
		ps[p] = struct{}{}
		s.mu.Unlock()
	}
}

// remove unregisters p (its request was answered or its connection is
// gone). Any goroutine.
func (t *takerTable) remove(p *Poll) {
	if p.Group == "" {
		return
	}
	for _, k := range p.Keys {
		s := t.stripe(k.Topic)
		s.mu.Lock()
		if ps := s.set[k]; ps != nil {
			delete(ps, p)
			if len(ps) == 0 {
				delete(s.set, k)
			}
		}
		s.mu.Unlock()
	}
}

// addWants adds to w (allocated when nil) what the takers of group on
// (topic, queueID) or on every queue of topic want, and returns it.
func (t *takerTable) addWants(w *PeerWants, group, topic string, queueID int32) *PeerWants {
	s := t.stripe(topic)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range [2]Key{{topic, queueID}, {topic, AnyQueue}} {
		for p := range s.set[k] {
			if p.Group != group {
				continue
			}
			if w = w.add(p); w.all {
				return w
			}
		}
	}
	return w
}

// count is how many (key, request) entries are registered; for tests.
func (t *takerTable) count() int {
	n := 0
	for i := range t.stripes {
		s := &t.stripes[i]
		s.mu.Lock()
		for _, ps := range s.set {
			n += len(ps)
		}
		s.mu.Unlock()
	}
	return n
}
