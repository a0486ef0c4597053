package popstore

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/linxGnu/grocksdb"
)

// Truncated segments. The synced RocksDB write of a batch whose records
// went to the commit log also stores, per segment written, how far into it
// committed records reach: meta "s/clog/" + start(u64 BE) → end (physical
// offset, i64). Open compares every segment file with it and refuses to
// start when a file is shorter, as RocketMQ refuses a commit-log file
// whose length does not match ("length not matched message store config
// value", MappedFileQueue.doLoad). Without the check a file cut after a
// crash or by hand opened silently: reads past its end found nothing and
// answered as if retention had removed those acknowledged messages
// (2026-12-07, 40 messages of 100 KB, 21 lost without a log line). Data
// directories written before the key existed are not checked until their
// next commit-log batch writes it.

// metaClogEndPrefix starts the meta keys of the segments' committed ends.
const metaClogEndPrefix = "s/clog/"

// clogEndKey is the meta key of the committed end of the segment at start.
func clogEndKey(start int64) []byte {
	return binary.BigEndian.AppendUint64([]byte(metaClogEndPrefix), uint64(start))
}

// parseClogEnd reads a meta entry under metaClogEndPrefix.
func parseClogEnd(k, v []byte) (start, end int64, ok bool) {
	if len(k) != len(metaClogEndPrefix)+8 {
		return 0, 0, false
	}
	end, ok = getInt64(v)
	return int64(binary.BigEndian.Uint64(k[len(metaClogEndPrefix):])), end, ok
}

// segEnd is how far the records a batch wrote reach into one segment.
type segEnd struct{ start, end int64 }

// checkEnds compares the open segments with the committed ends recorded
// for them (start → end). A segment shorter than its end is an error
// naming the file; so is a missing one that retention cannot have removed:
// one newer than an open segment (retention removes the oldest first), or
// one whose end lies above minIndexed, the lowest physical offset the
// physical-offset index still holds (retention deletes every entry below
// its floor before it removes a segment wholly below that floor; a segment
// deleted by hand still has its messages indexed). The other missing ones
// were removed by retention: returned as stale. REQUIRES: called by Open
// only.
func (c *commitLog) checkEnds(ends map[int64]int64, minIndexed int64) (stale []int64, err error) {
	have := make(map[int64]*segment, len(c.segs))
	for _, g := range c.segs {
		have[g.start] = g
	}
	for start, end := range ends {
		g, ok := have[start]
		switch {
		case ok && end > g.end():
			return nil, fmt.Errorf("popstore: commit log segment %s is %d bytes, but committed records reach byte %d of it: "+
				"the file was truncated or replaced after they were acknowledged; restore it, or move the data directory aside",
				g.f.Name(), len(g.data), end-start)
		case ok:
		case len(c.segs) > 0 && start > c.segs[0].start, end > minIndexed:
			return nil, fmt.Errorf("popstore: commit log segment %s/%020d is missing, but it holds committed records up to physical offset %d; "+
				"restore it, or move the data directory aside", c.dir, start, end)
		default:
			stale = append(stale, start)
		}
	}
	return stale, nil
}

// minIndexedPhys returns the lowest physical offset the physical-offset
// index holds, math.MaxInt64 when it holds none. Blocks on RocksDB (one
// seek): Open, or a reader holding the read guard.
func (s *Store) minIndexedPhys() (int64, error) {
	ro := grocksdb.NewDefaultReadOptions()
	defer ro.Destroy()
	ro.SetIterateUpperBound(prefixLimit(physPrefix))
	it := s.db.NewIteratorCF(ro, s.cfMessages())
	defer it.Close()
	if it.Seek(physPrefix); it.Valid() {
		if k := it.Key().Data(); len(k) == len(physPrefix)+8 {
			return int64(binary.BigEndian.Uint64(k[len(physPrefix):])), nil
		}
	}
	if err := it.Err(); err != nil {
		return 0, fmt.Errorf("popstore: commit log: read the physical-offset index: %w", err)
	}
	return math.MaxInt64, nil
}
