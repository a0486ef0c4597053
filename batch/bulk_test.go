package batch_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/popstore"
)

// batchLog records, per Txn (= per batch), the ids of the ops applied in it,
// in apply order, and the order in which batches started.
type batchLog struct {
	mu      sync.Mutex
	batches map[*popstore.Txn][]int
	order   []*popstore.Txn
}

func newBatchLog() *batchLog { return &batchLog{batches: map[*popstore.Txn][]int{}} }

func (l *batchLog) apply(id int) func(tx *popstore.Txn) error {
	return func(tx *popstore.Txn) error {
		l.mu.Lock()
		if _, ok := l.batches[tx]; !ok {
			l.order = append(l.order, tx)
		}
		l.batches[tx] = append(l.batches[tx], id)
		l.mu.Unlock()
		return tx.PutMetaValue(fmt.Sprint(id), nil)
	}
}

// ids returns the op ids of every batch, in batch order.
func (l *batchLog) ids() [][]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([][]int, len(l.order))
	for i, tx := range l.order {
		out[i] = l.batches[tx]
	}
	return out
}

// A bulk burst queued before foreground work enters each batch only up to
// MaxBulkOps: the foreground ops accepted after the burst are all written in
// the first batch, ahead of most of the burst, and every batch applies its
// ops in accept order.
func TestBulkLaneCapLetsForegroundOvertake(t *testing.T) {
	f := newFixture(t, batch.Options{MaxBulkOps: 3})
	release := f.stall(t, 1)
	log, rec := newBatchLog(), newRecorder()
	for i := 0; i < 10; i++ { // the burst: ids 0..9
		require.NoError(t, f.w.Submit(&batch.Op{Lane: batch.LaneBulk, Apply: log.apply(i), Done: rec.done(i)}))
	}
	for i := 100; i < 105; i++ { // ACKs arriving after it
		require.NoError(t, f.w.Submit(&batch.Op{Lane: batch.LaneForeground, Apply: log.apply(i), Done: rec.done(i)}))
	}
	require.Equal(t, 10.0, metricValue(t, f.reg, "popshim_writer_queue_depth", "bulk"), "the burst is queued on the bulk lane")
	release()
	rec.wait()
	got := log.ids()
	require.Equal(t, []int{0, 1, 2, 100, 101, 102, 103, 104}, got[0], "first batch: 3 bulk ops, then every foreground op, in accept order")
	require.Equal(t, [][]int{{3, 4, 5}, {6, 7, 8}, {9}}, got[1:], "the rest of the burst, 3 per batch, in accept order")
	ackDone := slices.Index(rec.ids, 104)
	require.Less(t, ackDone, slices.Index(rec.ids, 3), "the last foreground op completed before the 4th bulk op")
	for _, id := range rec.ids {
		require.NoError(t, rec.err(id))
	}
	require.Equal(t, uint64(4), histogramCount(t, f.reg, "popshim_writer_queue_head_wait_seconds", "bulk"), "one head wait per batch with bulk ops")
	require.Equal(t, uint64(2), histogramCount(t, f.reg, "popshim_writer_queue_head_wait_seconds", "foreground"), "the stall batch and the first batch")
}

// histogramCount returns the sample count of histogram name{lane=lane}.
func histogramCount(t *testing.T, reg *prometheus.Registry, name, lane string) uint64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "lane" && l.GetValue() == lane {
					return m.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	t.Fatalf("histogram %s{lane=%q} not found", name, lane)
	return 0
}

// However much foreground work is queued, every batch still takes bulk ops
// (up to MaxBulkOps), so the bulk lane cannot starve.
func TestBulkLaneNotStarved(t *testing.T) {
	f := newFixture(t, batch.Options{MaxBatchOps: 8, MaxBulkOps: 2})
	release := f.stall(t, 1)
	log, rec := newBatchLog(), newRecorder()
	for i := 0; i < 40; i++ {
		require.NoError(t, f.w.Submit(&batch.Op{Lane: batch.LaneForeground, Apply: log.apply(i), Done: rec.done(i)}))
	}
	for i := 100; i < 104; i++ {
		require.NoError(t, f.w.Submit(&batch.Op{Lane: batch.LaneBulk, Apply: log.apply(i), Done: rec.done(i)}))
	}
	release()
	rec.wait()
	got := log.ids()
	require.Equal(t, []int{0, 1, 2, 3, 4, 5, 100, 101}, got[0], "6 foreground + 2 bulk, merged in accept order")
	require.Equal(t, []int{6, 7, 8, 9, 10, 11, 102, 103}, got[1])
	for _, b := range got {
		require.LessOrEqual(t, len(b), 8, "MaxBatchOps respected")
	}
}

// Sync mode serves the bulk lane like the foreground lane: one worker takes
// them in accept order.
func TestSyncModeBulkInAcceptOrder(t *testing.T) {
	f := newFixture(t, batch.Options{Mode: batch.ModeSync, SyncWorkers: 1, MaxBulkOps: 1})
	release := f.stall(t, 1)
	log, rec := newBatchLog(), newRecorder()
	lanes := []batch.Lane{batch.LaneBulk, batch.LaneForeground, batch.LaneBulk, batch.LaneBulk, batch.LaneForeground}
	for i, lane := range lanes {
		require.NoError(t, f.w.Submit(&batch.Op{Lane: lane, Apply: log.apply(i), Done: rec.done(i)}))
	}
	release()
	rec.wait()
	require.Equal(t, [][]int{{0}, {1}, {2}, {3}, {4}}, log.ids(), "one op per write, in accept order across fg and bulk")
}

func TestBulkOptionsValidation(t *testing.T) {
	f := newFixture(t, batch.Options{})
	_, err := batch.New(f.store, batch.Options{MaxBulkOps: -1}, nil)
	require.ErrorContains(t, err, "MaxBulkOps")
	require.Equal(t, "bulk", batch.LaneBulk.String())
}

// A large bulk backlog drains faster than MaxBulkOps per batch: each batch
// also takes 1/256 of the backlog.
func TestBulkBacklogDrains(t *testing.T) {
	f := newFixture(t, batch.Options{MaxBulkOps: 1})
	release := f.stall(t, 1)
	log, rec := newBatchLog(), newRecorder()
	for i := 0; i < 600; i++ {
		require.NoError(t, f.w.Submit(&batch.Op{Lane: batch.LaneBulk, Apply: log.apply(i), Done: rec.done(i)}))
	}
	release()
	rec.wait()
	got := log.ids()
	require.Equal(t, []int{0, 1, 2}, got[0], "1 + 600/256 bulk ops in the first batch")
	require.Len(t, got[1], 3, "1 + 597/256")
	require.Less(t, len(got), 600, "fewer batches than with a fixed cap of 1")
	require.Equal(t, []int{599}, got[len(got)-1])
}
