package longpoll

import (
	"slices"

	"github.com/popshim/popshim/broker/filter"
	"github.com/popshim/popshim/codec"
)

// PeerWants is what the outstanding POP requests of one group want from
// one queue: everything (a peer without a filter), the tags their TAG
// filters name, and what their SQL92 selectors match. Built under a
// takerStripe lock, then read by one POP run only.
type PeerWants struct {
	all  bool
	tags map[string]struct{}
	sqls []*filter.Expr // distinct selectors (broker/filter.Cached shares equal ones)
}

// WantsProps reports whether a parked peer would take a message with the
// given properties string; false on a nil receiver (no peer parked).
func (w *PeerWants) WantsProps(props string) bool {
	if w == nil {
		return false
	}
	if w.all {
		return true
	}
	for _, e := range w.sqls {
		if e.Match(props) {
			return true
		}
	}
	if len(w.tags) == 0 {
		return false
	}
	tag, ok := codec.PropertyValue(props, codec.PropertyTags)
	if !ok {
		return false
	}
	_, hit := w.tags[tag]
	return hit
}

// add merges what poll p wants into w (allocated when nil) and returns it.
func (w *PeerWants) add(p *Poll) *PeerWants {
	if w == nil {
		w = &PeerWants{tags: make(map[string]struct{})}
	}
	if p.Filter == nil {
		w.all = true
		return w
	}
	if e := p.Filter.sql; e != nil {
		if !slices.Contains(w.sqls, e) {
			w.sqls = append(w.sqls, e)
		}
		return w
	}
	for t := range p.Filter.tags {
		w.tags[t] = struct{}{}
	}
	return w
}

// WantsOf returns what the POP requests of group outstanding on (topic,
// queueID) or on every queue of topic want: every request from its arrival
// until it is answered, parked or not, is in the takerTable, so a peer's
// scan must leave their messages alone. nil when there is none. Any
// goroutine; takes one takerStripe mutex (never one the writer holds).
func (r *Registry) WantsOf(group, topic string, queueID int32) *PeerWants {
	return r.takers.addWants(nil, group, topic, queueID)
}
