package popstore

// The Store's side of the commit log (commitlog.go): its options, opening
// it, resolving references on reads, and the extent runtime info reports.

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"

	"github.com/linxGnu/grocksdb"
)

// DefaultCommitLogMinBytes is Options.CommitLogMinBytes's default: every
// record of a batch that uses the commit log (Options.CommitLogBatchMinBytes)
// goes there.
const DefaultCommitLogMinBytes = 1

// DefaultCommitLogBatchMinBytes is Options.CommitLogBatchMinBytes's
// default, 32 KiB: under sustained produce a batch holds ~200 KiB of
// records (16 connections × 32 SENDs of 1 KiB), one producer at a time
// one record. Store alone, 1 KiB records 32 to a synced write: 8.3
// against 12.2 µs of CPU per message with the commit log, the same time
// per write; 16 to a write: 30 against 25–29 µs per message of wall time
// (the second fdatasync), so smaller batches stay inline.
const DefaultCommitLogBatchMinBytes = 32 << 10

// DefaultCommitLogBatchMinRecords is Options.CommitLogBatchMinRecords's
// default: 64 records of 128-byte bodies (~15 KiB) to a synced write cost
// 4.8–5.3 against 6.3–6.6 µs of CPU per message with the commit log (the
// memtable, flush and compactions keep 12-byte references, not records),
// at the same time per write.
const DefaultCommitLogBatchMinRecords = 64

// openCommitLog opens the commit log Options ask for, after the state is
// loaded (nextPhys known), and checks its segments against the committed
// ends (commitlog_check.go). REQUIRES: called by Open only.
func (s *Store) openCommitLog(opts Options, ends map[int64]int64) error {
	// Opened even when turned off, so references written before resolve.
	switch s.clogMin = opts.CommitLogMinBytes; {
	case s.clogMin < 0:
		s.clogMin = math.MaxInt
	case s.clogMin == 0:
		s.clogMin = DefaultCommitLogMinBytes
	}
	switch s.clogBatchMin = opts.CommitLogBatchMinBytes; {
	case s.clogBatchMin < 0:
		s.clogBatchMin = 0
	case s.clogBatchMin == 0:
		s.clogBatchMin = DefaultCommitLogBatchMinBytes
	}
	switch s.clogBatchMinRecs = opts.CommitLogBatchMinRecords; {
	case s.clogBatchMinRecs < 0:
		s.clogBatchMinRecs = math.MaxInt
	case s.clogBatchMinRecs == 0:
		s.clogBatchMinRecs = DefaultCommitLogBatchMinRecords
	}
	seg := opts.CommitLogSegmentBytes
	if seg <= 0 {
		seg = DefaultCommitLogSegmentBytes
	}
	c, removed, err := openCommitLog(filepath.Join(s.dir, commitLogDir), seg, s.nextPhys)
	if err != nil {
		return err
	}
	if len(removed) > 0 {
		s.log.Warn().Strs("segments", removed).Int64("nextPhysicalOffset", s.nextPhys).
			Msg("commit log segments past the last durable write removed")
	}
	minIndexed, err := s.minIndexedPhys()
	if err != nil {
		c.close()
		return err
	}
	stale, err := c.checkEnds(ends, minIndexed)
	if err != nil {
		c.close()
		return err
	}
	if len(stale) > 0 {
		wb := grocksdb.NewWriteBatch()
		for _, start := range stale {
			wb.DeleteCF(s.cfMeta(), clogEndKey(start))
		}
		err := s.db.Write(s.wo, wb) // a stale end left behind is only dropped again
		wb.Destroy()
		if err != nil {
			c.close()
			return fmt.Errorf("popstore: commit log: drop ends of removed segments: %w", err)
		}
	}
	s.clog = c
	return nil
}

// record returns the stored-message record a messages-family value holds:
// the value itself, or a copy of what its reference names. ErrNotFound when
// retention removed the segment. REQUIRES: readGuard held.
func (s *Store) record(v []byte) ([]byte, error) {
	phys, n, ok := isRef(v)
	if !ok {
		return v, nil
	}
	rec, err := s.clog.read(make([]byte, 0, n), phys, n)
	if errors.Is(err, errGone) {
		return nil, ErrNotFound
	}
	return rec, err
}

// getRecord reads the messages-family value under key and resolves it
// (Store.record). REQUIRES: readGuard held.
func (s *Store) getRecord(key []byte) ([]byte, error) {
	v, err := s.getCF(s.cfMessages(), key)
	if err != nil {
		return nil, err
	}
	return s.record(v)
}

// CommitLogMaxOffset is the physical offset the next stored record will
// get (CommitLogExtent's max, without its seek): the commit log's end.
// Any goroutine; lock-free.
func (s *Store) CommitLogMaxOffset() int64 { return s.committedPhys.Load() }

// CommitLogExtent returns the physical-offset extent of the stored
// messages as RocketMQ's getBrokerRuntimeInfo reports its commit log's
// (commitLogMinOffset, commitLogMaxOffset; DefaultMessageStore
// getMinPhyOffset and getMaxPhyOffset): min is the lower of the oldest
// commit-log segment's start and the oldest physical offset still indexed
// (records of small batches stay in RocksDB), maxOffset when nothing is
// stored; max is the physical offset the next record will get. Blocks on
// RocksDB (one seek): a reader goroutine. Errors: ErrClosed,
// ErrUnavailable, RocksDB errors.
func (s *Store) CommitLogExtent() (minOffset, maxOffset int64, err error) {
	if !s.readGuard() {
		return 0, 0, s.guardErr()
	}
	defer s.readDone()
	maxOffset = s.CommitLogMaxOffset()
	minOffset = maxOffset
	s.clog.mu.RLock()
	if len(s.clog.segs) > 0 {
		minOffset = min(minOffset, s.clog.segs[0].start)
	}
	s.clog.mu.RUnlock()
	indexed, err := s.minIndexedPhys()
	return min(minOffset, indexed), maxOffset, err
}
