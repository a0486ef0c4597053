package remoting

import "time"

// monoBase anchors monoNanos. time.Now carries a monotonic reading, and
// time.Since of such a value reads only the monotonic clock.
var monoBase = time.Now()

// monoNanos is the process's monotonic clock in nanoseconds since start.
// It costs one clock read (time.Now costs two: wall and monotonic), and the
// event loop stamps every request with it. Only differences between two
// monoNanos values mean anything. Safe from any goroutine.
func monoNanos() int64 { return int64(time.Since(monoBase)) }
