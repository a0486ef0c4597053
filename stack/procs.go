package stack

import (
	"os"
	"runtime"

	"github.com/rs/zerolog"

	"github.com/popshim/popshim/conf"
)

// serveProcs is the GOMAXPROCS Serve runs with: the Go runtime's default
// (the usable cores, cgroup limits included) plus the broker listener's
// gnet event loops (--event-loops, 0 = one per CPU as gnet counts them).
//
// A gnet event loop waits in epoll_wait as a plain system call, and the
// group-commit writer waits in fdatasync inside a cgo call; either holds
// its P meanwhile. With GOMAXPROCS equal to the cores, the event loops and
// the writer hold every P at light load, so the runtime's monitor thread
// takes Ps back from those calls every 20 µs to run the goroutines they
// woke, and stays at its shortest sleep. At 2,000 ACKs and 2,000
// CHANGE_INVISIBLE_TIMEs per second on 2 vCPUs (2026-12-06) its usleep
// wake-ups were 11 % of the broker's CPU, and the broker spent 70–74 µs
// of CPU per mutation; with a spare P per event loop they were gone and
// the broker spent 61–64 µs (docs/PERFORMANCE.md). The extra Ps add no
// CPU: runnable goroutines still share the same cores.
func serveProcs(cfg *conf.Config) int {
	loops := cfg.EventLoops
	if loops <= 0 {
		loops = runtime.NumCPU()
	}
	return runtime.GOMAXPROCS(0) + loops
}

// applyProcs sets GOMAXPROCS to serveProcs unless the GOMAXPROCS
// environment variable chose it. Process-wide: Serve only, before any
// goroutine of the stack starts.
func applyProcs(cfg *conf.Config, log zerolog.Logger) {
	if os.Getenv("GOMAXPROCS") != "" {
		return
	}
	n := serveProcs(cfg)
	prev := runtime.GOMAXPROCS(n)
	log.Debug().Int("gomaxprocs", n).Int("previous", prev).Msg("go procs set: the cores plus one per event loop")
}
