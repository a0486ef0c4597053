package stack

import (
	"errors"

	"github.com/rs/zerolog"

	"github.com/popshim/popshim/batch"
)

// requestedStopResult is what Serve returns for a stop that SIGINT or
// SIGTERM requested, given err, Stack.Close's joined errors: err without
// the group-commit writer's failure awaiting recovery (wrapping
// batch.ErrFailed, e.g. a full disk), which is logged at warn instead.
// Every write that failure refused was answered with an error and nothing
// acknowledged is lost, so the stop itself succeeded: the process exits 0
// and a service manager restarting on failure does not loop through
// starts that a still-full disk refuses. Other shutdown errors (a listener
// or the store failing to close) are kept. Serve's goroutine.
func requestedStopResult(err error, log zerolog.Logger) error {
	if err == nil {
		return nil
	}
	parts := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		parts = j.Unwrap()
	}
	var kept []error
	for _, e := range parts {
		if errors.Is(e, batch.ErrFailed) {
			log.Warn().Err(e).Msg("stopped while the writer was failed: the writes it refused were answered with errors, nothing acknowledged is lost; a start replays the WAL once the fault is gone")
			continue
		}
		kept = append(kept, e)
	}
	return errors.Join(kept...)
}
