package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// profileSideLoop returns a phase side loop that fetches a CPU profile of
// the server covering the measured phase: /debug/pprof/profile of the host
// of o.MetricsURL (a popshim serve --pprof), for o.Duration rounded up to
// whole seconds, written to o.CPUProfile. The server ends the profile by
// itself; the loop then waits for stop. Errors are logged, never fatal.
func profileSideLoop(o *Options) func(stop <-chan struct{}) {
	return func(stop <-chan struct{}) {
		if err := fetchProfile(o); err != nil {
			o.Log.Warn().Err(err).Msg("cpu profile")
		}
		<-stop
	}
}

func fetchProfile(o *Options) error {
	base, ok := strings.CutSuffix(o.MetricsURL, "/metrics")
	if !ok {
		return fmt.Errorf("bench: --cpu-profile needs a --metrics-url ending in /metrics, got %q", o.MetricsURL)
	}
	secs := int((o.Duration + time.Second - 1) / time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), o.Duration+30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, secs), nil)
	if err != nil {
		return fmt.Errorf("bench: cpu profile: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("bench: cpu profile: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("bench: cpu profile: %s (serve with --pprof)", resp.Status)
	}
	f, err := os.Create(o.CPUProfile)
	if err != nil {
		return fmt.Errorf("bench: cpu profile: %w", err)
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return fmt.Errorf("bench: cpu profile: %w", err)
	}
	return f.Close()
}
