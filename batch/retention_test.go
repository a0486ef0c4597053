package batch_test

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

// Retention through the writer: old messages go with a background-lane op,
// young ones stay, and a second pass finds nothing more to do.
func TestRunRetention(t *testing.T) {
	var now atomic.Int64
	now.Store(100_000)
	store, _ := popstoretest.Open(t, popstore.Options{RetentionMillis: 10_000, NowMillis: now.Load})
	w, err := batch.New(store, batch.Options{RetentionInterval: -1}, nil)
	require.NoError(t, err)
	defer w.Close()
	for i, ts := range []int64{50_000, 60_000, 95_000, 99_000} {
		require.NoError(t, w.SubmitWait(batch.LaneProduce, func(tx *popstore.Txn) error {
			_, _, err := tx.AppendMessage("T", 0, popstoretest.Record("T", 0, ts, []byte{byte(i)}))
			return err
		}))
	}
	require.NoError(t, w.RunRetention())
	require.Equal(t, int64(2), store.MinOffset("T", 0))
	require.Equal(t, int64(4), store.MaxOffset("T", 0))
	before := w.Stats().Batches
	require.NoError(t, w.RunRetention())
	require.Equal(t, before, w.Stats().Batches, "nothing new to remove: no batch")
	now.Store(200_000)
	require.NoError(t, w.RunRetention())
	require.Equal(t, int64(4), store.MinOffset("T", 0))
	recs, next, err := store.ReadMessages("T", 0, 0, 10, 1<<20)
	require.NoError(t, err)
	require.Empty(t, recs)
	require.Equal(t, int64(4), next)
}
