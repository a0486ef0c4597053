package batch_test

import (
	"testing"
	"time"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

// BenchmarkWriterHandoff measures the writer's own round trip, Submit to
// Done, with one op in flight and the synced write replaced by a no-op
// (popstore.Options.WriteHook that does not write): what is left is the
// writer's wake-up, the batch take, Apply, the completion hand-off and
// Done. It isolates the goroutine hand-offs that the fsync's spread hides
// in BenchmarkWriter/submitters=1. Reports µs per round trip.
func BenchmarkWriterHandoff(b *testing.B) {
	store, _ := popstoretest.Open(b, popstore.Options{WriteHook: func(uint64, func() error) error { return nil }})
	w, err := batch.New(store, batch.Options{RetentionInterval: -1}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	done := make(chan error, 1)
	op := &batch.Op{Lane: batch.LaneForeground, Bytes: 64,
		Apply: func(tx *popstore.Txn) error { return tx.PutMetaValue("handoff", []byte{1}) },
		Done:  func(err error) { done <- err }}
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if err := w.Submit(op); err != nil {
			b.Fatal(err)
		}
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N), "µs/roundtrip")
}
