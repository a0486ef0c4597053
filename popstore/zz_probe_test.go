package popstore

import ("testing";"time")

func probeRaw(b *testing.B, sync bool, batchOps int) {
	s, err := Open(Options{Dir: b.TempDir()})
	if err != nil { b.Fatal(err) }
	defer s.Close()
	s.wo.SetSync(sync)
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
func BenchmarkProbeSync64(b *testing.B)   { probeRaw(b, true, 64) }
func BenchmarkProbeNoSync64(b *testing.B) { probeRaw(b, false, 64) }
func BenchmarkProbeSync4096(b *testing.B)   { probeRaw(b, true, 4096) }
func BenchmarkProbeNoSync4096(b *testing.B) { probeRaw(b, false, 4096) }
