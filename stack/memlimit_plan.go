package stack

import (
	"math"
	"os"
	"runtime/debug"

	"github.com/rs/zerolog"

	"github.com/popshim/popshim/conf"
)

// memoryLimitPlan is what Serve does about the Go soft memory limit, from
// --memory-limit and the GOMEMLIMIT environment variable.
type memoryLimitPlan struct {
	// set is the limit Serve applies with debug.SetMemoryLimit, bytes; 0
	// leaves the runtime's (GOMEMLIMIT's, or none).
	set int64
	// auto starts the limiter of memlimit.go from set.
	auto bool
	// source names where the limit in force comes from: "--memory-limit",
	// "auto", "GOMEMLIMIT" or "none".
	source string
	// overridesEnv: a positive --memory-limit replaces a GOMEMLIMIT that
	// is set.
	overridesEnv bool
}

// planMemoryLimit decides the soft memory limit from flag
// (conf.Config.MemoryLimit), auto (the automatic limiter's base,
// conf.Config.EffectiveMemoryLimit when flag is 0) and env (GOMEMLIMIT,
// "" when unset):
//
//   - flag > 0: flag, fixed, whatever GOMEMLIMIT says;
//   - flag == 0: GOMEMLIMIT when set (the automatic limiter stays off),
//     else auto, followed by the automatic limiter;
//   - flag < 0: popshim sets none; GOMEMLIMIT applies when set.
func planMemoryLimit(flag, auto int64, env string) memoryLimitPlan {
	switch {
	case flag > 0:
		return memoryLimitPlan{set: flag, source: "--memory-limit", overridesEnv: env != ""}
	case env != "":
		return memoryLimitPlan{source: "GOMEMLIMIT"}
	case flag == 0 && auto > 0:
		return memoryLimitPlan{set: auto, auto: true, source: "auto"}
	}
	return memoryLimitPlan{source: "none"}
}

// applyMemoryLimit applies cfg's soft memory limit as planMemoryLimit
// decides with the process's GOMEMLIMIT, logs the limit in force at info,
// and returns the plan.
func applyMemoryLimit(cfg *conf.Config, log zerolog.Logger) memoryLimitPlan {
	env := os.Getenv("GOMEMLIMIT")
	p := planMemoryLimit(cfg.MemoryLimit, cfg.EffectiveMemoryLimit(), env)
	if p.set > 0 {
		debug.SetMemoryLimit(p.set)
	}
	ev := log.Info().Str("source", p.source)
	if cur := debug.SetMemoryLimit(-1); cur == math.MaxInt64 {
		ev = ev.Str("memory_limit", "none")
	} else {
		ev = ev.Int64("memory_limit", cur)
	}
	if env != "" {
		ev = ev.Str("gomemlimit", env)
	}
	switch {
	case p.overridesEnv:
		ev.Msg("go soft memory limit: --memory-limit overrides GOMEMLIMIT")
	case p.source == "GOMEMLIMIT":
		ev.Msg("go soft memory limit: GOMEMLIMIT is used")
	case p.auto:
		ev.Int64("ceiling", cfg.MemoryLimitCeiling()).Msg("go soft memory limit: automatic")
	default:
		ev.Msg("go soft memory limit")
	}
	return p
}
