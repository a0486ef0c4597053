package longpoll

// Stats is a snapshot of the registry's bookkeeping (tests, diagnostics).
// Each count is read under its stripe's mutex, one stripe at a time, so a
// Snapshot taken while requests park or wake is not atomic across stripes.
type Stats struct {
	Parked          int64  // requests parked now
	Parks           uint64 // successful parks since start
	PopRuns         uint64 // POP executions since start (countPopRun)
	Topics          int    // topics with at least one waiter
	WaiterKeys      int    // keys with at least one waiter
	WaiterEntries   int    // (key, poll) entries
	MaxOffsetTopics int    // topics with remembered per-queue maxOffsets
	MaxOffsetQueues int    // queues with a remembered maxOffset
	Epochs          int    // topics with an epoch entry (those without one share the floor)
	ProbesQueued    int    // tag-aware wake-ups waiting for a reader
	Takers          int    // (key, request) entries of the taker table
	ConnPolls       int    // polls held by the per-connection index
}

// Stats returns the current stats. Any goroutine; takes every stripe
// mutex in turn.
func (r *Registry) Stats() Stats {
	st := Stats{Parked: r.count.Load(), Parks: r.parks.Load(), PopRuns: r.popRuns.Load()}
	for i := range r.stripes {
		s := &r.stripes[i]
		s.mu.Lock()
		st.Topics += len(s.perTopic)
		st.WaiterKeys += len(s.waiters)
		for _, set := range s.waiters {
			st.WaiterEntries += len(set)
		}
		st.MaxOffsetTopics += len(s.maxOffsets)
		for _, qs := range s.maxOffsets {
			st.MaxOffsetQueues += len(qs)
		}
		st.Epochs += len(s.epochs)
		s.mu.Unlock()
	}
	st.ProbesQueued = r.probes.queued()
	st.Takers = r.takers.count()
	for i := range r.conns.stripes {
		c := &r.conns.stripes[i]
		c.mu.Lock()
		for _, ps := range c.polls {
			st.ConnPolls += len(ps)
		}
		c.mu.Unlock()
	}
	return st
}

// Deadlines returns the deadline (broker clock, Unix ms) of every parked
// request, in no particular order (tests, diagnostics).
func (r *Registry) Deadlines() []int64 {
	var out []int64
	for i := range r.stripes {
		s := &r.stripes[i]
		s.mu.Lock()
		seen := make(map[*Poll]bool)
		for _, set := range s.waiters {
			for p := range set {
				if !seen[p] {
					seen[p] = true
					out = append(out, p.DeadlineMillis)
				}
			}
		}
		s.mu.Unlock()
	}
	return out
}

// AddTaker registers the POP request p stands for as a taker of its keys
// from its arrival until it is answered (see takerTable). Any goroutine,
// including the event loop.
func (r *Registry) AddTaker(p *Poll) { r.takers.add(p) }

// RemoveTaker unregisters p (answered, or its connection is gone). Any
// goroutine.
func (r *Registry) RemoveTaker(p *Poll) { r.takers.remove(p) }

// CountPopRun counts one POP execution (stats.popRuns). Any goroutine.
func (r *Registry) CountPopRun() { r.popRuns.Add(1) }
