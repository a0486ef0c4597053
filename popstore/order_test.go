package popstore

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOrderStateEncoding(t *testing.T) {
	st := OrderState{AttemptID: "att-1", PopTime: 1234, InvisibleTime: 5000, Offsets: []int64{7, 9},
		VisibleAt: []int64{6234, 9999}, Counts: []int32{0, 3}, Acked: 2}
	got, err := decodeOrderState(encodeOrderState(&st))
	require.NoError(t, err)
	require.Equal(t, st, got)
	_, err = decodeOrderState(encodeOrderState(&st)[:30])
	require.Error(t, err)
	g, tp, q, ok := parseOrderKey(orderKey("G", "T", 3))
	require.True(t, ok)
	require.Equal(t, []any{"G", "T", int32(3)}, []any{g, tp, q})
}
