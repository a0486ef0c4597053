package handler

// markRerun records p, the stand-in (popJob.taker) of a POP request that is
// being served, under its keys: from the request's first run until it is
// answered, whether it runs, waits for a reader or is parked, wantsOf counts
// it as a taker of the messages its filter matches. Without this, a peer POP
// of the same group that scans the queue while the request is between runs
// (woken but not yet re-parked, or re-running after an epoch change) would
// skip those messages and commit the consume offset past them, so the
// request would never get them. Requests without a group (PULL,
// NOTIFICATION) take nothing from each other and are not recorded. Any
// goroutine; takes the stripe mutexes of p's keys.
func (r *pollRegistry) markRerun(p *parkedPoll) {
	if p.group == "" {
		return
	}
	for _, k := range p.keys {
		s := r.stripe(k.topic)
		s.mu.Lock()
		if s.rerunning == nil {
			s.rerunning = make(map[pollKey]map[*parkedPoll]struct{})
		}
		set := s.rerunning[k]
		if set == nil {
			set = make(map[*parkedPoll]struct{})
			s.rerunning[k] = set
		}
		set[p] = struct{}{}
		s.mu.Unlock()
	}
}

// unmarkRerun ends markRerun for p: its request was answered. nil p is a
// no-op. Any goroutine.
func (r *pollRegistry) unmarkRerun(p *parkedPoll) {
	if p == nil || p.group == "" {
		return
	}
	for _, k := range p.keys {
		s := r.stripe(k.topic)
		s.mu.Lock()
		if set := s.rerunning[k]; set != nil {
			delete(set, p)
			if len(set) == 0 {
				delete(s.rerunning, k)
			}
		}
		s.mu.Unlock()
	}
}

// rerunCount is how many (key, poll) entries markRerun holds; for tests.
func (r *pollRegistry) rerunCount() int {
	n := 0
	for i := range r.stripes {
		s := &r.stripes[i]
		s.mu.Lock()
		for _, set := range s.rerunning {
			n += len(set)
		}
		s.mu.Unlock()
	}
	return n
}
