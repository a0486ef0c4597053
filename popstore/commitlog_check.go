package popstore

import (
	"encoding/binary"
	"fmt"
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
// for them (start → end). A segment shorter than its end, or missing while
// an older one exists (retention removes the oldest first), is an error
// naming the file; ends of segments older than every open one (removed by
// retention) are returned as stale. REQUIRES: called by Open only.
func (c *commitLog) checkEnds(ends map[int64]int64) (stale []int64, err error) {
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
		case len(c.segs) > 0 && start > c.segs[0].start:
			return nil, fmt.Errorf("popstore: commit log segment %s/%020d is missing, but it holds committed records up to physical offset %d; "+
				"restore it, or move the data directory aside", c.dir, start, end)
		default:
			stale = append(stale, start)
		}
	}
	return stale, nil
}
