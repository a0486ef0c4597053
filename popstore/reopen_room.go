package popstore

// The checks before RocksDB opens the database, at a start and at a
// reopen: whether the filesystem can take the flush of the WAL's replay,
// and at a start whether another process holds the directory.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/linxGnu/grocksdb"
	"golang.org/x/sys/unix"
)

// ErrNoRoom is returned by Open and Reopen, which then leave the data
// directory as it is, while the filesystem has less free space than the
// flush of the WAL's replay needs plus reopenMinFreeBytes (roomToOpen).
var ErrNoRoom = errors.New("popstore: not enough free disk space to open the database")

// reopenMinFreeBytes is the free space an open wants beyond what the
// WAL's replay flushes.
const reopenMinFreeBytes = 4 << 20

// readyToOpen runs the checks of a start before RocksDB's open:
// checkUnlocked, trimOldInfoLogs (in infoLogDir, Options.InfoLogDir, or
// the data directory), roomToCreate and roomToOpen. Errors: ErrLocked, ErrNoRoom
// (wrapped, with the numbers and what to do).
func (s *Store) readyToOpen(infoLogDir string) error {
	if err := checkUnlocked(s.dir); err != nil {
		return err
	}
	if infoLogDir == "" {
		infoLogDir = s.dir
	}
	trimOldInfoLogs(infoLogDir)
	if err := roomToCreate(s.dir); err != nil {
		return fmt.Errorf("popstore: create %s: %w, then start again", s.dir, err)
	}
	if err := s.roomToOpen(true); err != nil {
		return fmt.Errorf("popstore: open %s: %w, then start again (opening writes the WAL's replay into table files)", s.dir, err)
	}
	return nil
}

// roomToCreate returns ErrNoRoom (wrapped, with the numbers) when dir
// holds no database yet (no CURRENT file) and its filesystem has less
// than reopenMinFreeBytes free: RocksDB's creation would fail writing its
// first files with its own ENOSPC message, and a writer could take no
// write afterwards anyway. An existing database is left to roomToOpen.
func roomToCreate(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "CURRENT")); !errors.Is(err, os.ErrNotExist) {
		return nil
	}
	avail, err := roomAvail(dir)
	if err != nil {
		return err
	}
	if avail < reopenMinFreeBytes {
		return fmt.Errorf("%w: a new database needs %d bytes free, %d free: free at least %d more bytes",
			ErrNoRoom, uint64(reopenMinFreeBytes), avail, reopenMinFreeBytes-avail)
	}
	return nil
}

// roomToReopen returns ErrNoRoom (wrapped, with the numbers) when the
// filesystem cannot hold a flush of the live WAL files; see roomToOpen.
func (s *Store) roomToReopen() error { return s.roomToOpen(false) }

// roomToOpen returns ErrNoRoom (wrapped, with the numbers) when the
// filesystem cannot hold the flush that opening the database performs: a
// replay of the live WAL files into table and blob files. cold is a start
// (Open): a killed process leaves its WAL's preallocated blocks allocated
// past the file's end, so they are given back first (releaseWALTails); a
// Reopen closes its WAL first, which gives them back, so they count as
// free. A process running as root may use the filesystem's reserved
// blocks, and RocksDB does, so they count as free for it (roomAvail).
//
// The WAL files may be much larger than what they hold unflushed (an old
// one stays while any family has not flushed past it), so below the WAL's
// size the memtables are the bound: the open database's, or, when it is
// not open, those a read-only open builds by replaying the WAL in memory
// (it writes nothing). A start refused here leaves the data directory as
// it was: an open that fails in its flush can leave a finished family's
// blob file (hundreds of MB) that nothing references until a later open
// succeeds, which then needs that much more room. When the read-only open
// fails the check passes and the real open decides.
func (s *Store) roomToOpen(cold bool) error {
	if cold {
		releaseWALTails(s.dir, s.log)
	}
	avail, err := roomAvail(s.dir)
	if err != nil {
		return err
	}
	wal, prealloc, err := walSpace(s.dir)
	if err != nil {
		return err
	}
	if cold {
		prealloc = 0 // what releaseWALTails could not give back stays allocated
	}
	free := avail + prealloc
	if free >= wal+reopenMinFreeBytes {
		return nil
	}
	mem, ok := s.memtableBytes()
	if !ok {
		if mem, ok = s.replayBytes(); !ok {
			return nil
		}
	}
	need := min(wal, mem) + reopenMinFreeBytes
	if free < need {
		return fmt.Errorf("%w: %d bytes needed (%d to flush the WAL's replay into, plus %d), %d free: free at least %d more bytes",
			ErrNoRoom, need, need-reopenMinFreeBytes, uint64(reopenMinFreeBytes), free, need-free)
	}
	return nil
}

// roomAvail is the free space of dir's filesystem that this process may
// use: the blocks available to unprivileged users, and for root (euid 0)
// the reserved ones too.
func roomAvail(dir string) (uint64, error) {
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		return 0, fmt.Errorf("popstore: statfs %s: %w", dir, err)
	}
	if os.Geteuid() == 0 {
		return fs.Bfree * uint64(fs.Bsize), nil
	}
	return fs.Bavail * uint64(fs.Bsize), nil
}

// ErrLocked is returned by Open when another process has the database
// open (RocksDB's LOCK file is locked).
var ErrLocked = errors.New("popstore: the data directory is in use by another process")

// checkUnlocked returns ErrLocked (wrapped) when another process holds
// the lock on dir's LOCK file that RocksDB takes at open (fcntl, a write
// lock of the whole file), so that a second broker on the same directory
// is told so before the room check reads the directory. It tests with an
// open-file-description lock, which conflicts with the other process's
// lock and, unlike a process lock, is dropped without touching the locks
// this process holds. A missing LOCK file (a new database) passes.
func checkUnlocked(dir string) error {
	f, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_RDWR, 0)
	if err != nil {
		return nil
	}
	defer func() { _ = f.Close() }() // opened only to test the lock
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk); err != nil {
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
			return fmt.Errorf("%w: %s is locked (another popshim?)", ErrLocked, filepath.Join(dir, "LOCK"))
		}
		return nil // the real open reports what is wrong
	}
	lk.Type = unix.F_UNLCK
	_ = unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk)
	return nil
}

// replayBytes opens the database read-only, which replays the WAL into
// memtables without writing a file, and returns their size
// (memtablesSize); ok=false when that open fails (no database yet, a
// family missing, damage: the real open reports it).
// REQUIRES: s.db == nil.
func (s *Store) replayBytes() (uint64, bool) {
	sig, err := walSignature(s.dir)
	if err != nil {
		return 0, false
	}
	if s.replayed.sig == sig && sig != "" {
		return s.replayed.bytes, true
	}
	mem, ok := s.replayMeasure()
	if ok {
		s.replayed = replayMemo{sig: sig, bytes: mem}
	}
	return mem, ok
}

// replayMemo is the last replayBytes measure and the WAL files it
// measured (walSignature): while a store is down its WAL does not change,
// and the writer asks again every --writer-probe-interval.
type replayMemo struct {
	sig   string
	bytes uint64
}

// replayMeasure is replayBytes without the memo.
func (s *Store) replayMeasure() (uint64, bool) {
	names, cfOpts := s.families()
	db, handles, err := grocksdb.OpenDbForReadOnlyColumnFamilies(s.opts, s.dir, names, cfOpts, false)
	if err != nil {
		return 0, false
	}
	defer func() {
		for _, h := range handles {
			h.Destroy()
		}
		db.Close()
	}()
	return memtablesSize(db, handles)
}

// memtableBytes is memtablesSize of the open database; ok=false when it
// is not open. REQUIRES: closeMu held exclusively (Reopen).
func (s *Store) memtableBytes() (uint64, bool) {
	if s.db == nil {
		return 0, false
	}
	return memtablesSize(s.db, s.cfs[:])
}

// memtablesSize sums RocksDB's rocksdb.cur-size-all-mem-tables (active
// and unflushed immutable memtables, their arenas: at least the data)
// over the column families handles of db; ok=false when a handle is nil
// or the property is missing.
func memtablesSize(db *grocksdb.DB, handles []*grocksdb.ColumnFamilyHandle) (uint64, bool) {
	var sum uint64
	for _, h := range handles {
		if h == nil {
			return 0, false
		}
		n, ok := db.GetIntPropertyCF("rocksdb.cur-size-all-mem-tables", h)
		if !ok {
			return 0, false
		}
		sum += n
	}
	return sum, true
}

// trimOldInfoLogs deletes all but the newest keptInfoLogs of RocksDB's
// rotated info logs (names containing "LOG.old.") in dir. RocksDB trims
// them only after an open succeeded, and every open rotates the LOG: a
// start that kept failing (a full disk, a restart loop) left one more
// each time (25 after 25 attempts). Best effort.
func trimOldInfoLogs(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	var old []string
	for _, e := range ents {
		if strings.Contains(e.Name(), "LOG.old.") {
			old = append(old, e.Name())
		}
	}
	if len(old) <= keptInfoLogs {
		return
	}
	// The suffix is the rotation time in µs, all of one width: the names
	// sort by age.
	slices.Sort(old)
	for _, name := range old[:len(old)-keptInfoLogs] {
		_ = os.Remove(filepath.Join(dir, name)) // a log file: nothing to lose
	}
}
