package batch

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/popstore"
)

// TestAcceptedCountsPerLane: Accepted counts the ops Submit accepted on
// each lane, and nothing for a refused op or an unknown lane.
func TestAcceptedCountsPerLane(t *testing.T) {
	st, err := popstore.Open(popstore.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	defer st.Close()
	w, err := New(st, Options{}, nil)
	require.NoError(t, err)
	defer w.Close()
	noop := func(*popstore.Txn) error { return nil }
	require.NoError(t, w.SubmitWait(LaneForeground, noop))
	require.NoError(t, w.SubmitWait(LaneForeground, noop))
	require.NoError(t, w.SubmitWait(LaneBackground, noop))
	require.ErrorIs(t, w.Submit(&Op{Lane: numLanes}), ErrBadLane)
	require.EqualValues(t, 2, w.Accepted(LaneForeground))
	require.EqualValues(t, 1, w.Accepted(LaneBackground))
	require.Zero(t, w.Accepted(LaneBulk))
	require.Zero(t, w.Accepted(numLanes))
}
