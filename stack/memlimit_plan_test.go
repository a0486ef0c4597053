package stack

import (
	"bytes"
	"runtime/debug"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/conf"
)

// A positive --memory-limit wins over GOMEMLIMIT; 0 uses GOMEMLIMIT when
// set and the automatic limiter otherwise; negative sets none, so
// GOMEMLIMIT (when set) applies.
func TestPlanMemoryLimit(t *testing.T) {
	const auto = 320 << 20
	for _, tc := range []struct {
		name string
		flag int64
		env  string
		want memoryLimitPlan
	}{
		{"flag, no env", 1 << 30, "", memoryLimitPlan{set: 1 << 30, source: "--memory-limit"}},
		{"flag beats env", 1 << 30, "200MiB", memoryLimitPlan{set: 1 << 30, source: "--memory-limit", overridesEnv: true}},
		{"auto, no env", 0, "", memoryLimitPlan{set: auto, auto: true, source: "auto"}},
		{"auto yields to env", 0, "200MiB", memoryLimitPlan{source: "GOMEMLIMIT"}},
		{"env off counts as set", 0, "off", memoryLimitPlan{source: "GOMEMLIMIT"}},
		{"none, no env", -1, "", memoryLimitPlan{source: "none"}},
		{"none leaves env", -1, "200MiB", memoryLimitPlan{source: "GOMEMLIMIT"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, planMemoryLimit(tc.flag, auto, tc.env))
		})
	}
}

// applyMemoryLimit sets the runtime's limit for a positive --memory-limit
// even with GOMEMLIMIT set, and leaves it alone at 0 when GOMEMLIMIT is
// set; either way it logs the limit in force at info.
func TestApplyMemoryLimit(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(prev)
	t.Setenv("GOMEMLIMIT", "200MiB")
	var logs bytes.Buffer
	log := zerolog.New(&logs).Level(zerolog.InfoLevel)

	cfg := conf.Default()
	cfg.MemoryLimit = 1 << 30
	p := applyMemoryLimit(cfg, log)
	require.True(t, p.overridesEnv)
	require.Equal(t, int64(1<<30), debug.SetMemoryLimit(-1))
	require.Contains(t, logs.String(), `"memory_limit":1073741824`)
	require.Contains(t, logs.String(), "--memory-limit overrides GOMEMLIMIT")

	logs.Reset()
	debug.SetMemoryLimit(300 << 20) // stands for what the runtime took from GOMEMLIMIT
	cfg.MemoryLimit = 0
	p = applyMemoryLimit(cfg, log)
	require.False(t, p.auto, "GOMEMLIMIT keeps the automatic limiter off")
	require.Equal(t, int64(300<<20), debug.SetMemoryLimit(-1))
	require.Contains(t, logs.String(), `"memory_limit":314572800`)
	require.Contains(t, logs.String(), "GOMEMLIMIT is used")
}
