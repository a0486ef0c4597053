package popstore

import ("testing";"time";"runtime";"github.com/linxGnu/grocksdb")

func probeRaw(b *testing.B, sync bool, batchOps int, tune func(*grocksdb.Options), perfOff bool) {
	tuneForTest = tune
	defer func(){tuneForTest=nil}()
	s, err := Open(Options{Dir: b.TempDir()})
	if err != nil { b.Fatal(err) }
	defer s.Close()
	s.wo.SetSync(sync)
	if perfOff { runtime.LockOSThread(); defer runtime.UnlockOSThread(); grocksdb.SetPerfLevel(grocksdb.KDisable) }
	b.ResetTimer()
	start := time.Now()
	var writeDur time.Duration
	for i := 0; i < b.N; i += batchOps {
		tx := s.Begin()
		for j := i; j < i+batchOps && j < b.N; j++ {
			j := j
			tx.Do(func(tx *Txn) error {
				old := CheckpointKey{VisibleAtMillis: 1_700_000_000_000 + int64(j), Group: "bench_group", Topic: "bench_topic", QueueId: int32(j % 8), QueueOffset: int64(j)}
				nk := old; nk.VisibleAtMillis += 30000
				return tx.ReplaceCheckpoint(old, Checkpoint{Key: nk, PopTimeMillis: 1, InvisibleTimeMillis: 60000})
			})
		}
		t0 := time.Now()
		tx.Commit()
		writeDur += time.Since(t0)
	}
	el := time.Since(start)
	b.ReportMetric(float64(b.N)/el.Seconds(), "mut/s")
	b.ReportMetric(float64(writeDur.Nanoseconds())/float64(b.N), "writens/mut")
}
func BenchmarkProbeBase(b *testing.B)   { probeRaw(b, false, 256, nil, false) }
func BenchmarkProbePerfOff(b *testing.B)   { probeRaw(b, false, 256, nil, true) }
func BenchmarkProbeSmallWB(b *testing.B)   { probeRaw(b, false, 256, func(o *grocksdb.Options){ o.SetWriteBufferSize(4<<20) }, false) }
func BenchmarkProbeNoConc(b *testing.B)   { probeRaw(b, false, 256, func(o *grocksdb.Options){ o.SetAllowConcurrentMemtableWrites(false) }, false) }
func BenchmarkProbeVector(b *testing.B)   { probeRaw(b, false, 256, func(o *grocksdb.Options){ o.SetAllowConcurrentMemtableWrites(false); o.SetMemtableVectorRep() }, false) }
func BenchmarkProbeB2Base(b *testing.B)   { probeRaw(b, false, 256, nil, false) }
func BenchmarkProbeB2PerfOff(b *testing.B)   { probeRaw(b, false, 256, nil, true) }
func BenchmarkProbeB2SmallWBPerfOff(b *testing.B)   { probeRaw(b, false, 256, func(o *grocksdb.Options){ o.SetWriteBufferSize(8<<20) }, true) }
func BenchmarkProbeB2NoCompPerfOff(b *testing.B)   { probeRaw(b, false, 256, func(o *grocksdb.Options){ o.SetCompression(grocksdb.NoCompression) }, true) }
func probeSorted(b *testing.B, sorted bool) {
	s, err := Open(Options{Dir: b.TempDir()})
	if err != nil { b.Fatal(err) }
	defer s.Close()
	s.wo.SetSync(false)
	b.ResetTimer()
	start := time.Now()
	var writeDur time.Duration
	const batchOps = 64
	key := func(j int, d int64) CheckpointKey { return CheckpointKey{VisibleAtMillis: 1_700_000_000_000 + int64(j) + d, Group: "bench_group", Topic: "bench_topic", QueueId: int32(j % 8), QueueOffset: int64(j)} }
	for i := 0; i < b.N; i += batchOps {
		tx := s.Begin()
		if sorted {
			for j := i; j < i+batchOps; j++ { tx.DeleteCheckpoint(key(j, 0)) }
			for j := i; j < i+batchOps; j++ { tx.PutCheckpoint(Checkpoint{Key: key(j, 30000)}) }
		} else {
			for j := i; j < i+batchOps; j++ { tx.PutCheckpoint(Checkpoint{Key: key(j, 30000)}); tx.DeleteCheckpoint(key(j, 0)) }
		}
		t0 := time.Now()
		tx.Commit()
		writeDur += time.Since(t0)
	}
	el := time.Since(start)
	b.ReportMetric(float64(b.N)/el.Seconds(), "mut/s")
	b.ReportMetric(float64(writeDur.Nanoseconds())/float64(b.N), "writens/mut")
}
func BenchmarkProbeS1Interleaved(b *testing.B) { probeSorted(b, false) }
func BenchmarkProbeS1Sorted(b *testing.B) { probeSorted(b, true) }
