package revive

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
)

// TestFailedPassesLogSparsely: while the store refuses writes a pass fails
// every retry (500 ms); the log names the first failure of a run, then
// one a failLogEvery, and the end of the run once. Found when a full disk
// wrote 152 error lines in 75 s.
func TestFailedPassesLogSparsely(t *testing.T) {
	var buf bytes.Buffer
	r := &Reviver{d: Deps{Log: zerolog.New(&buf)}}
	lines := func(msg string) int { return strings.Count(buf.String(), msg) }
	boom := errors.New("store not writable")
	for i := 0; i < 50; i++ {
		r.noteWriteFailed(boom, 7)
	}
	require.Equal(t, 1, lines("pass not written"))
	r.failLogged = time.Now().Add(-failLogEvery - time.Second)
	r.noteWriteFailed(boom, 7)
	require.Equal(t, 2, lines("pass not written"))
	require.Contains(t, buf.String(), `"failedPasses":51`)
	r.noteWritten()
	r.noteWritten()
	require.Equal(t, 1, lines("passes are written again"))
	r.noteWriteFailed(boom, 1)
	require.Equal(t, 3, lines("pass not written"), "a new run is logged at once")
}
