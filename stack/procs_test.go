package stack

import (
	"runtime"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/conf"
)

// TestServeProcs: Serve runs with one P per core plus one per event loop
// of the broker listener (gnet's default: one per CPU), and leaves
// GOMAXPROCS alone when the environment sets it.
func TestServeProcs(t *testing.T) {
	cores := runtime.GOMAXPROCS(0)
	require.Equal(t, cores+3, serveProcs(&conf.Config{EventLoops: 3}))
	require.Equal(t, cores+runtime.NumCPU(), serveProcs(&conf.Config{}))

	defer runtime.GOMAXPROCS(cores)
	t.Setenv("GOMAXPROCS", "1")
	applyProcs(&conf.Config{EventLoops: 2}, zerolog.Nop())
	require.Equal(t, cores, runtime.GOMAXPROCS(0), "GOMAXPROCS from the environment wins")
	t.Setenv("GOMAXPROCS", "")
	applyProcs(&conf.Config{EventLoops: 2}, zerolog.Nop())
	require.Equal(t, cores+2, runtime.GOMAXPROCS(0))
}
