package bench

import "time"

// monoBase anchors monoNanos.
var monoBase = time.Now()

// monoNanos is the process's monotonic clock in nanoseconds since start:
// one clock read where time.Now takes two (wall and monotonic). Request
// latencies are differences of two readings. Safe from any goroutine.
func monoNanos() int64 { return int64(time.Since(monoBase)) }

// monoOf returns t (which must carry a monotonic reading, as every
// time.Now-derived value does) on the monoNanos scale.
func monoOf(t time.Time) int64 { return int64(t.Sub(monoBase)) }

// startNow, as the start time given to stream.issue, means "now".
const startNow int64 = -1
