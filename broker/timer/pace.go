package timer

import (
	"time"

	"github.com/popshim/popshim/batch"
)

// Pacing of a drain (a burst of timers due at once must not raise
// ACK latency). While latency-sensitive work reaches the writer, the loop
// delivers small chunks and rests between them, so that delivery ops hold
// the single writer for about a share of its time (--timer-drain-share,
// default 0.25); with no such work, and for the first burstItems timers of
// every drain, it delivers full chunks back to back, so light-load
// lateness is unchanged. Measured cause (docs/PERFORMANCE.md, Timers): a
// synced write that carries a delivery chunk of ~80 KB is 3–4 times
// slower, and every ACK queued behind it waits for it. With 16 KB chunks,
// 100,000 timers due at once under a 10,000 ACK/s stream raised ACK p99
// by a median 1.25× at share 0.5 (8 runs) and not at 0.25 (median 0.97×,
// 5 runs), which drains at 4,900–7,700 timers/s on the 2-vCPU machine.
const (
	// busyChunkBytes closes a chunk at this many record bytes while
	// foreground work is seen (~50 delivered records of ~300 bytes).
	busyChunkBytes = 16 << 10
	// defaultShare is the share of time a paced drain's ops may take
	// (--timer-drain-share): after an op that took t from Submit to Done
	// the loop rests t × (1 − share) / share.
	defaultShare = 0.25
	// maxRest bounds one rest, so a stalled write does not park the drain.
	maxRest = 50 * time.Millisecond
	// burstItems: the first this many timers of a drain are delivered
	// unpaced, so a small burst keeps its lateness within the 200 ms goal
	// even under an ACK stream (1,000 timers drain in ~60 ms unpaced; paced
	// from the start, 1,000 timers at 10,000 ACK/s were ≤ 500 ms late at
	// p99, and so they were when pacing began once the drain was 100 ms
	// late).
	burstItems = 4096
)

// pacer tells whether foreground work arrived since the last pass and
// how long to rest after a delivery op. Loop goroutine only.
type pacer struct {
	w     *batch.Writer
	share float64 // Deps.DrainShare, in (0, 1]
	seen  uint64
	// drained counts the timers delivered since the drain began (a pass
	// that found nothing due ends a drain).
	drained int
}

// foreground returns the ops accepted so far on the latency-sensitive lanes
// (foreground, bulk, produce).
func (p *pacer) foreground() uint64 {
	return p.w.Accepted(batch.LaneForeground) + p.w.Accepted(batch.LaneBulk) + p.w.Accepted(batch.LaneProduce)
}

// busy reports whether this pass is paced: latency-sensitive ops were
// accepted since the last call and the drain has already delivered
// burstItems timers.
func (p *pacer) busy() bool {
	n := p.foreground()
	b := n != p.seen
	p.seen = n
	return b && p.drained >= burstItems
}

// rest is the pause after a paced delivery op that took took.
func (p *pacer) rest(took time.Duration) time.Duration {
	return min(time.Duration(float64(took)*(1-p.share)/p.share), maxRest)
}
