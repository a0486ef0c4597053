package popstore

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"
)

// preadMinBytes is the record size, bytes, from which reads copy a
// record with pread instead of out of the segment's mapping. A copy out
// of the mapping leaves the pages it touched counted in the process's RSS
// until the next retention pass (releaseMapped); pread leaves them in the
// page cache only. 100 unread gRPC streams of 4 MiB messages had 275 MiB
// of one segment in a 582 MiB RSS (2026-12-07). Smaller records keep the
// mapping: one system call each would cost more than their copy.
const preadMinBytes = 32 << 10

// copyAt appends the n bytes at phys to dst; ok is false, dst unchanged,
// when no segment holds them. A record of preadMinBytes or more is read
// with pread; when that fails it is copied from the mapping, as smaller
// ones are (a failing disk then faults there, as it did before).
// REQUIRES: mu held (shared is enough).
func (c *commitLog) copyAt(dst []byte, phys int64, n int) ([]byte, bool) {
	b := c.at(phys, n)
	if b == nil {
		return dst, false
	}
	if n >= preadMinBytes {
		g := c.segs[c.find(phys)]
		at := len(dst)
		dst = growLen(dst, n)
		if preadFull(g.f.Fd(), dst[at:], phys-g.start) == nil {
			return dst, true
		}
		dst = dst[:at]
	}
	return append(dst, b...), true
}

// growLen extends dst by n bytes (contents unspecified), reallocating only
// when its capacity is short.
func growLen(dst []byte, n int) []byte {
	if cap(dst)-len(dst) < n {
		grown := make([]byte, len(dst), len(dst)+n)
		copy(grown, dst)
		dst = grown
	}
	return dst[:len(dst)+n]
}

// preadFull fills b from file offset off of fd, retrying short reads and
// EINTR; a file that ends first answers unix.EIO.
func preadFull(fd uintptr, b []byte, off int64) error {
	for len(b) > 0 {
		m, err := unix.Pread(int(fd), b, off)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if m == 0 {
			return unix.EIO
		}
		b, off = b[m:], off+int64(m)
	}
	return nil
}

// read appends the n bytes at phys to dst. errGone when no segment holds
// them. Any goroutine.
func (c *commitLog) read(dst []byte, phys int64, n int) ([]byte, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	dst, ok := c.copyAt(dst, phys, n)
	if !ok {
		return dst, errGone
	}
	return dst, nil
}

// resolve replaces each reference among recs[first:] by a copy, appended
// to dst (which must have room for all of them: the slices point into it),
// of what it names, and removes from recs those errGone would answer. One
// shared lock for the whole set. Any goroutine.
func (c *commitLog) resolve(dst []byte, recs [][]byte, first int) ([]byte, [][]byte) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	kept := first
	for _, v := range recs[first:] {
		phys, n, ok := isRef(v)
		if !ok {
			recs[kept] = v
			kept++
			continue
		}
		at := len(dst)
		if dst, ok = c.copyAt(dst, phys, n); !ok {
			continue // removed by retention while the read ran
		}
		recs[kept] = dst[at:len(dst):len(dst)]
		kept++
	}
	return dst, recs[:kept]
}

// recordAt copies the record at phys that ends at or below end, read with
// pread only: a fault in the mapping maps a whole large folio of the page
// cache (decoding 8 records of up to 3 MiB in place mapped 6 MiB on a
// 6.18 kernel). It reads the record's first recPhysOffset+8 bytes, then
// the rest only when they hold a TOTALSIZE that fits below end and in the
// segment and PHYSICALOFFSET phys, so an offset inside a record costs one
// short read, not an allocation of whatever size its bytes name. nil
// with a nil error: no such record (none there, a hole, a removed
// segment). Errors: the read's. Any goroutine (takes mu shared).
func (c *commitLog) recordAt(phys, end int64) ([]byte, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	head := c.at(phys, recPhysOffset+8)
	if head == nil {
		return nil, nil
	}
	g := c.segs[c.find(phys)]
	buf := make([]byte, recPhysOffset+8)
	if err := preadFull(g.f.Fd(), buf, phys-g.start); err != nil {
		return nil, fmt.Errorf("popstore: commit log: read at %d: %w", phys, err)
	}
	size := int64(binary.BigEndian.Uint32(buf))
	if p, _ := RecordPhysicalOffset(buf); p != phys || size < recMinLen || size > end-phys || phys+size > g.end() {
		return nil, nil
	}
	rec := make([]byte, size)
	copy(rec, buf)
	if err := preadFull(g.f.Fd(), rec[len(buf):], phys-g.start+int64(len(buf))); err != nil {
		return nil, fmt.Errorf("popstore: commit log: read at %d: %w", phys, err)
	}
	return rec, nil
}
