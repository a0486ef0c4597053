package batch_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/popstore"
)

// changeOp is the benchmark mutation: a CHANGE_INVISIBLE_TIME — put the new
// checkpoint, delete the old one (two WriteBatch entries, ~60 bytes each).
func changeOp(s, i int) func(tx *popstore.Txn) error {
	return func(tx *popstore.Txn) error {
		old := popstore.CheckpointKey{VisibleAtMillis: 1_700_000_000_000 + int64(i), Group: "bench_group", Topic: "bench_topic", QueueId: int32(s % 8), QueueOffset: int64(i)}
		nk := old
		nk.VisibleAtMillis += 30_000
		return tx.ReplaceCheckpoint(old, popstore.Checkpoint{Key: nk, PopTimeMillis: nk.VisibleAtMillis - 60_000, InvisibleTimeMillis: 60_000})
	}
}

// BenchmarkWriter compares group commit with the sync baseline (one synced
// db.Write per op from 16 workers) at several numbers of concurrent
// submitters. Each submitter is a closed loop: submit one CHANGE, wait for
// Done, repeat (a client with one request in flight). Reports mutations/s,
// real WAL fsyncs per 1000 mutations (RocksDB ticker rocksdb.wal.synced,
// which counts one sync per RocksDB write group) and db.Write calls per 1000
// mutations.
func BenchmarkWriter(b *testing.B) {
	// Pairs run back to back, so both modes of one row see the same machine.
	for _, n := range []int{1, 16, 64, 256} {
		for _, mode := range []batch.Mode{batch.ModeGroup, batch.ModeSync} {
			b.Run(fmt.Sprintf("submitters=%d/mode=%s", n, mode), func(b *testing.B) { benchWriter(b, mode, n) })
		}
	}
}

// BenchmarkWriterPipelined is BenchmarkWriter at 64 submitters that each
// keep 16 CHANGEs in flight (a client acknowledging asynchronously), so
// 1024 ops are outstanding. Supplementary: it shows how far each mode
// batches when more work is waiting than submitters.
func BenchmarkWriterPipelined(b *testing.B) {
	for _, mode := range []batch.Mode{batch.ModeGroup, batch.ModeSync} {
		b.Run(fmt.Sprintf("submitters=64/window=16/mode=%s", mode), func(b *testing.B) { benchWriterWindow(b, mode, 64, 16) })
	}
}

func benchWriter(b *testing.B, mode batch.Mode, submitters int) {
	benchWriterWindow(b, mode, submitters, 1)
}

func benchWriterWindow(b *testing.B, mode batch.Mode, submitters, window int) {
	store, err := popstore.Open(popstore.Options{Dir: b.TempDir(), Statistics: true})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	w, err := batch.New(store, batch.Options{Mode: mode}, nil)
	if err != nil {
		b.Fatal(err)
	}
	syncs0, _ := store.WALSyncs()
	cpu0 := cpuTime()
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for s := 0; s < submitters; s++ {
		wg.Add(1)
		go func(s int) {
			defer wg.Done()
			free := make(chan *batch.Op, window) // ops not in flight
			for k := 0; k < window; k++ {
				op := &batch.Op{Lane: batch.LaneForeground, Bytes: 128}
				op.Done = func(err error) {
					if err != nil {
						b.Error(err)
					}
					free <- op
				}
				free <- op
			}
			for {
				op := <-free
				i := int(next.Add(1))
				if i > b.N {
					break
				}
				op.Apply = changeOp(s, i)
				if err := w.Submit(op); err != nil {
					b.Error(err)
					return
				}
			}
			for k := 1; k < window; k++ { // wait for the rest in flight
				<-free
			}
		}(s)
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	st := w.Stats()
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	syncs, _ := store.WALSyncs()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "mut/s")
	b.ReportMetric(float64(syncs-syncs0)*1000/float64(b.N), "fsyncs/1000mut")
	b.ReportMetric(float64(st.Fsyncs)*1000/float64(b.N), "writes/1000mut")
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/mut")
	if st.Fsyncs > 0 {
		b.ReportMetric(float64(st.WriteTime.Microseconds())/float64(st.Fsyncs), "µs/write")
	}
}

// BenchmarkRawLargeBatch is the ceiling: one goroutine builds one WriteBatch
// of batchOps CHANGE mutations and writes it with one fsync, repeatedly — no
// queue, no callbacks.
func BenchmarkRawLargeBatch(b *testing.B) {
	const batchOps = 4096
	store, err := popstore.Open(popstore.Options{Dir: b.TempDir(), Statistics: true})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	syncs0, _ := store.WALSyncs()
	cpu0 := cpuTime()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i += batchOps {
		tx := store.Begin()
		for j := i; j < i+batchOps && j < b.N; j++ {
			if err := tx.Do(changeOp(j%8, j)); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	syncs, _ := store.WALSyncs()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "mut/s")
	b.ReportMetric(float64(syncs-syncs0)*1000/float64(b.N), "fsyncs/1000mut")
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/mut")
}

// cpuTime is the process's user+system CPU time (all threads: submitters,
// writer, RocksDB background work).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
