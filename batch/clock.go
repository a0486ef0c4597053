package batch

import "time"

// monoBase anchors monoNanos.
var monoBase = time.Now()

// monoNanos is the process's monotonic clock in nanoseconds since start:
// one clock read where time.Now takes two (wall and monotonic). Submit
// stamps every Op with it. Only differences mean anything. Safe from any
// goroutine.
func monoNanos() int64 { return int64(time.Since(monoBase)) }
