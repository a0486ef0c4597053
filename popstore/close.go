package popstore

// Closing the database and the shared close lock every read takes.

import "fmt"

// Close syncs the WAL and closes the database. The batch writer must have
// been closed (drained) first. Later calls return ErrClosed; reads called
// after Close return ErrClosed or zero values.
func (s *Store) Close() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.closed = true
	var err error
	// Every write is synced, so the WAL holds nothing to flush; the call
	// only guards against a future unsynced write. After a failed write it
	// would reach the failed WAL writer and abort (writeFailed).
	if s.db != nil && !s.writeFailed.Load() {
		if e := s.db.FlushWAL(true); e != nil {
			err = fmt.Errorf("popstore: sync WAL on close: %w", e)
		}
		s.flushMemtables()
	}
	s.closeDB()
	s.destroyOptions()
	if s.clog != nil {
		s.clog.close()
	}
	s.log.Info().Msg("store closed")
	return err
}

// closeDB closes the database and its column family handles (not the
// options, which Reopen reuses). REQUIRES: closeMu held exclusively, or
// no other goroutine has the Store yet.
func (s *Store) closeDB() {
	if s.db == nil {
		return
	}
	for i, h := range s.cfs {
		if h != nil {
			h.Destroy()
			s.cfs[i] = nil
		}
	}
	s.db.Close()
	s.db = nil
}

// readGuard takes the shared close lock; ok=false after Close and while
// the database is down (see Reopen).
func (s *Store) readGuard() bool {
	s.closeMu.RLock()
	if s.closed || s.db == nil {
		s.closeMu.RUnlock()
		return false
	}
	return true
}

func (s *Store) readDone() { s.closeMu.RUnlock() }
