package bench

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

// TestStageBreakdownFromWriter runs a real group-commit writer over a real
// store, scrapes its /metrics before and after 400 foreground and 40 bulk
// ops, and checks the breakdown the bench prints: every per-op stage of
// the foreground lane saw the sampled ops (one in 4) and only those of the
// span, the per-batch stages saw every batch, and the stages add up (a
// total is at least its lane wait).
func TestStageBreakdownFromWriter(t *testing.T) {
	store, _ := popstoretest.Open(t, popstore.Options{})
	reg := prometheus.NewRegistry()
	w, err := batch.New(store, batch.Options{RetentionInterval: -1}, reg)
	require.NoError(t, err)
	defer func() { require.NoError(t, w.Close()) }()
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	s := newScraper(srv.URL)
	ctx := context.Background()

	put := func(lane batch.Lane, i int) func(tx *popstore.Txn) error {
		return func(tx *popstore.Txn) error {
			return tx.PutMetaValue(fmt.Sprintf("stage_test_%d_%d", lane, i), []byte{1})
		}
	}
	require.NoError(t, w.SubmitWait(batch.LaneForeground, put(batch.LaneForeground, 0))) // before: not counted
	a, err := s.scrape(ctx)
	require.NoError(t, err)
	before := w.Stats()

	// Ops are sampled by accept sequence (seq%4 == 0); the op before the
	// span had seq 1, so op i has seq i+2.
	var sampled [2]float64 // foreground, bulk
	done := make(chan error, 440)
	for i := range 440 {
		lane, k := batch.LaneForeground, 0
		if i%11 == 10 {
			lane, k = batch.LaneBulk, 1
		}
		if (i+2)%4 == 0 {
			sampled[k]++
		}
		op := &batch.Op{Lane: lane, Apply: put(lane, i), Done: func(err error) { done <- err }}
		require.NoError(t, w.Submit(op))
	}
	for range 440 {
		require.NoError(t, <-done)
	}
	b, err := s.scrape(ctx)
	require.NoError(t, err)
	batches := float64(w.Stats().Batches - before.Batches)

	got := map[string]StageStats{}
	for _, st := range delta(a, b).Stages {
		got[st.Stage] = st
	}
	for _, k := range []string{"foreground/lane_wait", "foreground/complete_wait", "foreground/done", "foreground/total"} {
		require.Equal(t, sampled[0], got[k].Count, "%s: one in 4 of the 400 foreground ops", k)
	}
	require.Equal(t, batches, got["batch/apply"].Count)
	require.Equal(t, batches, got["batch/write"].Count)
	require.Greater(t, got["batch/write"].MeanMs, 0.0)
	require.Equal(t, sampled[1], got["bulk/total"].Count, "one in 4 of the 40 bulk ops")
	require.GreaterOrEqual(t, got["foreground/total"].MeanMs, got["foreground/lane_wait"].MeanMs)
	require.GreaterOrEqual(t, got["foreground/total"].P99Ms, got["foreground/total"].P50Ms)
}
