package popstore

// The room check before a reopen: whether the filesystem can take the
// flush the reopen's WAL replay performs.

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// ErrNoRoom is returned by Reopen, which then leaves the database as it
// is, while the filesystem has less free space than the live WAL files
// plus reopenMinFreeBytes: the reopen would replay the WAL and flush it
// to new table files, and fail.
var ErrNoRoom = errors.New("popstore: not enough free disk space to reopen the database")

// reopenMinFreeBytes is the free space Reopen wants beyond the WAL's size.
const reopenMinFreeBytes = 4 << 20

// roomToReopen returns ErrNoRoom (wrapped, with the numbers) when the
// filesystem cannot hold a flush of the live WAL files.
func (s *Store) roomToReopen() error {
	_, avail, err := s.DiskUsage()
	if err != nil {
		return err
	}
	wal, prealloc, err := walSpace(s.dir)
	if err != nil {
		return err
	}
	// The reopen flushes what the WAL holds that no table file does yet:
	// the memtables' contents. The WAL files may be much larger (an old
	// one stays while any family has not flushed past it), so while the
	// failed database is still open its memtables' size is the bound.
	need := wal
	if mem, ok := s.memtableBytes(); ok && mem < need {
		need = mem
	}
	if avail+prealloc < need+reopenMinFreeBytes {
		return fmt.Errorf("%w: %d bytes free, %d more preallocated past the WAL's end, %d bytes to flush (WAL %d bytes)",
			ErrNoRoom, avail, prealloc, need, wal)
	}
	return nil
}

// memtableBytes sums RocksDB's rocksdb.cur-size-all-mem-tables (active and
// unflushed immutable memtables, their arenas: at least the data) over the
// column families; ok=false when the database is not open.
// REQUIRES: closeMu held exclusively (Reopen).
func (s *Store) memtableBytes() (uint64, bool) {
	if s.db == nil {
		return 0, false
	}
	var sum uint64
	for _, h := range s.cfs {
		if h == nil {
			return 0, false
		}
		n, ok := s.db.GetIntPropertyCF("rocksdb.cur-size-all-mem-tables", h)
		if !ok {
			return 0, false
		}
		sum += n
	}
	return sum, true
}

// walSpace sums the sizes of the WAL files (*.log) in dir, and the disk
// space allocated past their ends: RocksDB preallocates a WAL
// (fallocate, about 1.1 × the memtable) and gives the unused part back
// when it closes the file, as Reopen's close does, so that space is free
// for the replay's flush.
func walSpace(dir string) (wal, prealloc uint64, err error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0, fmt.Errorf("popstore: %w", err)
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".log") {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		wal += uint64(fi.Size())
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			if alloc := uint64(st.Blocks) * 512; alloc > uint64(fi.Size()) {
				prealloc += alloc - uint64(fi.Size())
			}
		}
	}
	return wal, prealloc, nil
}
