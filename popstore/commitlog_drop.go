package popstore

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// dropBelow removes the segments whose every byte lies below floor (the
// smallest physical offset still referenced, RetentionPlan.PhysicalFloor);
// the newest segment always stays. The segment floor falls in gets the
// whole pages below floor punched out (fallocate PUNCH_HOLE), so a disk
// smaller than a few segments gets space back too. It returns the names
// removed. Any goroutine; readers of those segments get errGone afterwards.
func (c *commitLog) dropBelow(floor int64) ([]string, error) {
	c.mu.Lock()
	n := 0
	for n+1 < len(c.segs) && c.segs[n+1].start <= floor {
		n++
	}
	gone := append([]*segment(nil), c.segs[:n]...)
	c.segs = append(c.segs[:0], c.segs[n:]...)
	var punchErr error
	if len(c.segs) > 0 {
		punchErr = c.segs[0].punchBelow(floor)
	}
	c.mu.Unlock()
	var names []string
	var first error
	for _, g := range gone {
		name := g.f.Name()
		g.unmap()
		if err := os.Remove(name); err != nil && first == nil {
			first = fmt.Errorf("popstore: commit log: %w", err)
		}
		names = append(names, filepath.Base(name))
	}
	if first == nil {
		first = punchErr
	}
	return names, first
}

// punchBelow gives back the whole 4 KiB pages of g below physical offset
// floor that are not yet a hole. Nothing there is referenced any more;
// a read of it would see zeros. REQUIRES: commitLog.mu.
func (g *segment) punchBelow(floor int64) error {
	end := min(floor-g.start, int64(len(g.data))) &^ (4096 - 1)
	if end <= g.punched {
		return nil
	}
	err := unix.Fallocate(int(g.f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, g.punched, end-g.punched)
	if err != nil {
		return fmt.Errorf("popstore: commit log: punch %s below %d: %w", g.f.Name(), floor, err)
	}
	g.punched = end
	return nil
}
