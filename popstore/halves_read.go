package popstore

import (
	"errors"
	"fmt"

	"github.com/linxGnu/grocksdb"
)

// Half returns the durable half message at physicalOffset (a copy owned by
// the caller); ok=false when there is none. Blocks on RocksDB (one point
// read): not on an event loop. Errors: ErrClosed, ErrUnavailable,
// ErrBadRecord (corrupt value), RocksDB errors.
func (s *Store) Half(physicalOffset int64) (Half, bool, error) {
	if !s.readGuard() {
		return Half{}, false, s.guardErr()
	}
	defer s.readDone()
	v, err := s.getCF(s.cfMessages(), halfKey(physicalOffset))
	if errors.Is(err, ErrNotFound) {
		return Half{}, false, nil
	}
	if err != nil {
		return Half{}, false, err
	}
	h, err := decodeHalfValue(physicalOffset, v)
	if err != nil {
		return Half{}, false, err
	}
	return h, true, nil
}

// PendingHalves returns the number of durable half messages. Lock-free;
// safe on an event loop.
func (s *Store) PendingHalves() int64 { return s.half.count.Load() }

// ScanHalves returns the durable half messages whose due-index entry is at
// or after from and due at or before toDueMillis, in due order, at most
// limit of them and, past the first, at most maxBytes of records. Each is
// read with a point lookup after its index entry; an entry whose half is
// gone by then (decided meanwhile) is skipped. from lets the check-back
// loop start past the entries it has handled, whose deletions RocksDB
// keeps as tombstones until compaction. Blocks on RocksDB: call from the
// check-back goroutine. Errors: ErrClosed, ErrUnavailable, ErrBadRecord,
// RocksDB errors.
func (s *Store) ScanHalves(from HalfDue, toDueMillis int64, limit, maxBytes int) ([]Half, error) {
	if !s.readGuard() {
		return nil, s.guardErr()
	}
	defer s.readDone()
	if limit <= 0 || toDueMillis < 0 {
		return nil, nil
	}
	ro := grocksdb.NewDefaultReadOptions()
	defer ro.Destroy()
	ro.SetIterateUpperBound(halfDueKey(toDueMillis+1, 0))
	it := s.db.NewIteratorCF(ro, s.cfMessages())
	defer it.Close()
	var out []Half
	bytes := 0
	for it.Seek(halfDueKey(from.DueMillis, from.PhysicalOffset)); it.Valid() && len(out) < limit && (len(out) == 0 || bytes < maxBytes); it.Next() {
		k, err := parseHalfDueKey(it.Key().Data())
		if err != nil {
			return out, err
		}
		v, err := s.getCF(s.cfMessages(), halfKey(k.PhysicalOffset))
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return out, err
		}
		h, err := decodeHalfValue(k.PhysicalOffset, v)
		if err != nil {
			return out, err
		}
		if h.DueMillis != k.DueMillis {
			continue // the half moved on after the iterator was opened
		}
		bytes += len(h.Record)
		out = append(out, h)
	}
	if err := it.Err(); err != nil {
		return out, fmt.Errorf("popstore: scan halves: %w", err)
	}
	return out, nil
}

// NextHalfDue returns the due time of the earliest due-index entry at or
// after from, ok=false when there is none. Blocks on RocksDB (one seek).
func (s *Store) NextHalfDue(from HalfDue) (dueMillis int64, ok bool, err error) {
	if !s.readGuard() {
		return 0, false, s.guardErr()
	}
	defer s.readDone()
	ro := grocksdb.NewDefaultReadOptions()
	defer ro.Destroy()
	ro.SetIterateUpperBound(prefixLimit(halfDuePrefix))
	it := s.db.NewIteratorCF(ro, s.cfMessages())
	defer it.Close()
	it.Seek(halfDueKey(from.DueMillis, from.PhysicalOffset))
	if !it.Valid() {
		if err := it.Err(); err != nil {
			return 0, false, fmt.Errorf("popstore: seek halves: %w", err)
		}
		return 0, false, nil
	}
	k, err := parseHalfDueKey(it.Key().Data())
	if err != nil {
		return 0, false, err
	}
	return k.DueMillis, true, nil
}
