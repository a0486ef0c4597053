package popstore

// The commit log: stored-message records written once, at their physical
// offset, into segment files beside RocksDB, which keeps a 12-byte
// reference per message instead of the record (Options.CommitLogMinBytes).
//
// Layout. <Dir>/commitlog/<20-digit start> is a segment: a sparse file of
// its capacity (ftruncate at creation, so nothing beyond the written bytes
// takes disk) holding, at file offset p − start, the record whose
// PHYSICALOFFSET is p. A record lives in the segment with the greatest
// start ≤ p and lies wholly inside it; when a record does not fit the
// current segment, a new one starts at the record's own physical offset,
// so physical offsets stay the byte sums they were before the commit log
// (halves, timer entries and inline records leave holes nobody writes).
// The rule depends only on which segments exist, and segments are only
// created at offsets beyond every committed record, so the writer and
// every later reader agree on where a record is.
//
// Durability. Txn.Commit writes the batch's records (when they total at
// least Options.CommitLogBatchMinBytes; else they stay inline) with
// pwrite, makes them durable with fdatasync (and the directory with
// fsync when a segment was created), and only then performs the synced
// RocksDB write holding the references and "s/phys". After a crash, bytes past "s/phys" were
// never acknowledged: Open removes segments that start there or later and
// later batches overwrite the rest.
//
// Reads copy from a read-only shared mapping of each segment; a segment is
// unmapped only by retention (dropBelow) and Close, both with mu held
// exclusively.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// DefaultCommitLogSegmentBytes is Options.CommitLogSegmentBytes's default:
// RocketMQ's mappedFileSizeCommitLog, 1 GiB.
const DefaultCommitLogSegmentBytes = 1 << 30

// refLen is the length of a commit-log reference stored in the messages
// family in place of a record: physicalOffset(u64) size(u32), big-endian.
// No stored-message record is that short (recMinLen).
const refLen = 12

// commitLogDir is the commit log's directory under Options.Dir.
const commitLogDir = "commitlog"

// putRef returns the reference to a record of n bytes at phys, in b.
func putRef(b *[refLen]byte, phys int64, n int) []byte {
	binary.BigEndian.PutUint64(b[:8], uint64(phys))
	binary.BigEndian.PutUint32(b[8:], uint32(n))
	return b[:]
}

// isRef reports whether a messages-family value is a commit-log reference
// and returns what it names.
func isRef(v []byte) (phys int64, n int, ok bool) {
	if len(v) != refLen {
		return 0, 0, false
	}
	return int64(binary.BigEndian.Uint64(v)), int(binary.BigEndian.Uint32(v[8:])), true
}

// segment is one commit-log file, mapped read-only over its capacity.
type segment struct {
	start int64 // physical offset of file offset 0
	f     *os.File
	data  []byte // the mapping; len is the capacity
	// punched is how many bytes from the file's start dropBelow has
	// given back to the filesystem (a hole). REQUIRES: commitLog.mu.
	punched int64
}

func (g *segment) end() int64 { return g.start + int64(len(g.data)) }

// clogRec is one record a Txn has queued for the commit log: b (the
// caller's record, not a copy) goes to physical offset phys; its reference
// is the batch's entry number rec.
type clogRec struct {
	phys int64
	b    []byte
	rec  int
}

// end is the physical offset just past r.
func (r *clogRec) end() int64 { return r.phys + int64(len(r.b)) }

// maxIovecs bounds the records one pwritev carries (Linux's IOV_MAX).
const maxIovecs = 1024

// commitLog is the set of segments. Writes come from the goroutine holding
// the store's serialMu (Txn.Commit); reads from any goroutine.
type commitLog struct {
	dir      string
	segBytes int64
	mu       sync.RWMutex // guards segs; held shared while copying out of a mapping
	segs     []*segment   // by start, ascending
}

// openCommitLog opens the segments in dir (creating it) and removes those
// starting at or after nextPhys, which hold nothing acknowledged.
func openCommitLog(dir string, segBytes, nextPhys int64) (*commitLog, []string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("popstore: commit log: %w", err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("popstore: commit log: %w", err)
	}
	c := &commitLog{dir: dir, segBytes: segBytes}
	var removed []string
	for _, e := range ents {
		start, err := strconv.ParseInt(e.Name(), 10, 64)
		if err != nil || len(e.Name()) != 20 || e.IsDir() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if start >= nextPhys {
			if err := os.Remove(path); err != nil {
				c.close()
				return nil, nil, fmt.Errorf("popstore: commit log: %w", err)
			}
			removed = append(removed, e.Name())
			continue
		}
		g, err := mapSegment(path, start, 0)
		if err != nil {
			c.close()
			return nil, nil, err
		}
		c.segs = append(c.segs, g)
	}
	sort.Slice(c.segs, func(i, j int) bool { return c.segs[i].start < c.segs[j].start })
	if len(removed) > 0 {
		if err := syncDir(dir); err != nil {
			c.close()
			return nil, nil, err
		}
	}
	return c, removed, nil
}

// mapSegment opens (size 0) or creates (size > 0: a sparse file of that
// size) the segment at path and maps it.
func mapSegment(path string, start, size int64) (*segment, error) {
	flags := os.O_RDWR
	if size > 0 {
		flags |= os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return nil, fmt.Errorf("popstore: commit log: %w", err)
	}
	if size > 0 {
		err = f.Truncate(size)
	} else {
		var fi os.FileInfo
		if fi, err = f.Stat(); err == nil {
			size = fi.Size()
		}
	}
	if err == nil && size <= 0 {
		err = fmt.Errorf("segment %s is empty", path)
	}
	var data []byte
	if err == nil {
		data, err = unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	}
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("popstore: commit log: %w", err)
	}
	return &segment{start: start, f: f, data: data}, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("popstore: commit log: %w", err)
	}
	defer func() { _ = d.Close() }()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("popstore: commit log: sync %s: %w", dir, err)
	}
	return nil
}

// find returns the index of the segment with the greatest start ≤ phys,
// or -1. REQUIRES: mu held.
func (c *commitLog) find(phys int64) int {
	return sort.Search(len(c.segs), func(i int) bool { return c.segs[i].start > phys }) - 1
}

// write stores recs and makes them durable: one pwritev per run of
// records contiguous in the log and in one segment (at most maxIovecs
// each), straight from the records' own buffers, then fdatasync of every
// segment written, creating segments as records need them (and syncing the
// directory then). On error some records may be written, none is
// referenced yet: the caller fails the batch. It returns how far the
// records reach into each segment written (ends, reused), for the batch to
// record (commitlog_check.go). Caller: the goroutine committing, with
// serialMu held.
func (c *commitLog) write(recs []clogRec, ends []segEnd) ([]segEnd, error) {
	var dirty []*segment
	ends = ends[:0]
	created := false
	iov := make([][]byte, 0, min(len(recs), maxIovecs))
	for i := 0; i < len(recs); {
		r := &recs[i]
		g, err := c.segmentFor(r.phys, int64(len(r.b)), &created)
		if err != nil {
			return nil, err
		}
		iov = append(iov[:0], r.b)
		j := i + 1
		for j < len(recs) && len(iov) < maxIovecs && recs[j].phys == recs[j-1].end() && recs[j].end() <= g.end() {
			iov = append(iov, recs[j].b)
			j++
		}
		if err := pwritevAll(g.f, iov, r.phys-g.start); err != nil {
			return nil, fmt.Errorf("popstore: commit log write: %w", err)
		}
		if len(dirty) == 0 || dirty[len(dirty)-1] != g {
			dirty = append(dirty, g)
			ends = append(ends, segEnd{start: g.start})
		}
		ends[len(ends)-1].end = recs[j-1].end()
		i = j
	}
	for _, g := range dirty {
		if err := unix.Fdatasync(int(g.f.Fd())); err != nil {
			return nil, fmt.Errorf("popstore: commit log fdatasync: %w", err)
		}
	}
	if created {
		if err := syncDir(c.dir); err != nil {
			return nil, err
		}
	}
	return ends, nil
}

// segmentFor returns the segment a record of n bytes at phys goes to,
// creating one that starts at phys when the current one cannot hold it.
func (c *commitLog) segmentFor(phys, n int64, created *bool) (*segment, error) {
	c.mu.RLock()
	i := c.find(phys)
	var g *segment
	if i >= 0 && phys+n <= c.segs[i].end() {
		g = c.segs[i]
	}
	c.mu.RUnlock()
	if g != nil {
		return g, nil
	}
	g, err := mapSegment(filepath.Join(c.dir, fmt.Sprintf("%020d", phys)), phys, max(c.segBytes, n))
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	// A failed batch may have left a segment at phys: replace it.
	if i := c.find(phys); i >= 0 && c.segs[i].start == phys {
		c.segs[i].unmap()
		c.segs[i] = g
	} else {
		c.segs = append(c.segs, g)
		sort.Slice(c.segs, func(i, j int) bool { return c.segs[i].start < c.segs[j].start })
	}
	c.mu.Unlock()
	*created = true
	return g, nil
}

// errGone is returned by read for a record whose segment retention has
// removed.
var errGone = errors.New("popstore: commit log segment removed")

// at returns the mapped n bytes at phys, nil when no segment holds them.
// REQUIRES: mu held (the bytes are valid while it is).
func (c *commitLog) at(phys int64, n int) []byte {
	b := c.from(phys)
	if n < 0 || n > len(b) {
		return nil
	}
	return b[:n]
}

// from returns the mapped bytes from phys to the end of the segment
// holding it, nil when none does or phys lies in its punched-out start
// (retention passed it). REQUIRES: mu held (the bytes are valid while it
// is).
func (c *commitLog) from(phys int64) []byte {
	i := c.find(phys)
	if i < 0 || phys >= c.segs[i].end() || phys < c.segs[i].start+c.segs[i].punched {
		return nil
	}
	g := c.segs[i]
	return g.data[phys-g.start:]
}

func (g *segment) unmap() {
	_ = unix.Munmap(g.data)
	g.data = nil
	_ = g.f.Close()
}

// close unmaps and closes every segment. REQUIRES: no reader or writer
// left (Store.Close holds closeMu exclusively).
func (c *commitLog) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, g := range c.segs {
		g.unmap()
	}
	c.segs = nil
}

// releaseMapped drops every segment's mapped pages from this process
// (madvise MADV_DONTNEED on the shared, read-only mappings): they stay in
// the page cache and a later read maps them again, but the process's RSS
// no longer counts what reads touched (after a retention pass 349 MiB of
// one segment was counted in a 629 MiB RSS). Any goroutine.
func (c *commitLog) releaseMapped() {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, g := range c.segs {
		_ = unix.Madvise(g.data, unix.MADV_DONTNEED) // advice: nothing to lose
	}
}
