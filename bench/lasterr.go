package bench

import "sync/atomic"

// lastError keeps the most recent error reported by any goroutine of a
// load loop. Unlike an atomic.Value it takes errors of any concrete type
// (an atomic.Value panics when a transport error follows a reply error).
// The zero value holds no error; safe for concurrent use.
type lastError struct{ p atomic.Pointer[error] }

// Store records err; a nil err is ignored. Any goroutine.
func (l *lastError) Store(err error) {
	if err != nil {
		l.p.Store(&err)
	}
}

// Load returns the last error stored, or nil. Any goroutine.
func (l *lastError) Load() error {
	if p := l.p.Load(); p != nil {
		return *p
	}
	return nil
}
