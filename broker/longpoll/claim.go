package longpoll

// detach removes p from the stripes of keys (see pollStripe.remove for
// keepOffsets).
func (r *Registry) detach(p *Poll, keys []Key, keepOffsets bool) {
	for _, k := range keys {
		s := r.stripe(k.Topic)
		s.mu.Lock()
		s.remove(k, p, keepOffsets)
		s.mu.Unlock()
	}
}

// claim makes the caller the one that finishes p: it removes p from every
// stripe and stops its timer. It reports false when someone else already
// claimed p. woken: p leaves because messages arrived (keeps the per-queue
// maxOffsets of its topics, see pollStripe.remove).
func (r *Registry) claim(p *Poll, woken bool) bool {
	if !p.done.CompareAndSwap(false, true) {
		return false
	}
	r.detach(p, p.Keys, woken)
	if p.ConnID != 0 {
		r.conns.remove(p)
	}
	p.mu.Lock()
	if p.timer != nil {
		p.timer.Stop()
	}
	p.mu.Unlock()
	if !p.waitOnly {
		r.count.Add(-1)
		r.gauge()
	}
	return true
}

func (r *Registry) expire(p *Poll) {
	if r.claim(p, false) {
		p.OnExpire()
	}
}
