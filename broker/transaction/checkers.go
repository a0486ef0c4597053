package transaction

import "math/rand/v2"

// checkerSet is several Checkers tried in turn for one check: each
// protocol adapter (remoting, gRPC) registers its own, and each answers
// false when no producer of the group is connected through it. Immutable
// once built; AddChecker and its remove function replace it.
type checkerSet []Checker

// Check tries every Checker once, from a random one on (so producers of a
// group connected through two protocols share the checks), and reports
// whether one sent it.
func (s checkerSet) Check(c Check) bool {
	if len(s) == 0 {
		return false
	}
	start := rand.IntN(len(s))
	for i := range s {
		if s[(start+i)%len(s)].Check(c) {
			return true
		}
	}
	return false
}

// AddChecker adds c to the Checkers the loop tries for each check, next to
// those installed before (SetChecker's included): a check is sent through
// the first of them, in random order, that has a producer of the half's
// group connected. The remoting adapter adds one for producers that sent
// HEART_BEAT; a gRPC adapter adds one that relays the check as
// RecoverOrphanedTransactionCommand on a telemetry stream of a producer of
// that group. c must be comparable (a pointer); remove takes it out again.
// Any goroutine, any time; the next check uses the new set.
func (l *Loop) AddChecker(c Checker) (remove func()) {
	l.updateCheckers(func(cur checkerSet) checkerSet { return append(cur, c) })
	return func() {
		l.updateCheckers(func(cur checkerSet) checkerSet {
			out := make(checkerSet, 0, len(cur))
			removed := false
			for _, x := range cur {
				if !removed && x == c {
					removed = true
					continue
				}
				out = append(out, x)
			}
			return out
		})
	}
}

// updateCheckers replaces the installed Checker by f applied to a copy of
// the current set (a lone Checker counts as a set of one).
func (l *Loop) updateCheckers(f func(checkerSet) checkerSet) {
	for {
		old := l.checker.Load()
		var cur checkerSet
		if old != nil {
			if s, ok := old.c.(checkerSet); ok {
				cur = append(checkerSet(nil), s...)
			} else if old.c != nil {
				cur = checkerSet{old.c}
			}
		}
		next := &checkerRef{f(cur)}
		if l.checker.CompareAndSwap(old, next) {
			return
		}
	}
}
