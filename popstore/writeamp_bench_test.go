package popstore_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

// BenchmarkMessagesWriteAmp appends b.N messages with random bodies (1 KiB,
// 16 KiB)
// round-robin over 8 queues, 256 per synced write (a busy group-commit
// writer), with the commit log (the default), with blob files and no
// commit log (CommitLogMinBytes -1, as before 2026-12-05) and with every
// record inline (BlobMinBytes -1 too, as before 2026-12-04), then waits for RocksDB's flushes and compactions to
// end. It reports the process's CPU time per message (every thread) and
// the bytes written per payload byte: disk-B/payload-B from
// /proc/self/io write_bytes (everything the process wrote, as `make
// bench-cost` counts a server) and RocksDB's own tickers: WAL, flush
// (table files), compaction and blob files.
//
//	go test -run '^$' -bench MessagesWriteAmp -benchtime 400000x ./popstore/
func BenchmarkMessagesWriteAmp(b *testing.B) {
	for _, body := range []int{1024, 16384} {
		for _, c := range []struct {
			name          string
			minBlob, clog int
		}{{"commitlog", 0, 0}, {"blobs", 0, -1}, {"inline", -1, -1}} {
			b.Run(fmt.Sprintf("body=%d/%s", body, c.name), func(b *testing.B) { benchWriteAmp(b, body, c.minBlob, c.clog) })
		}
	}
}

func benchWriteAmp(b *testing.B, body, minBlob, clog int) {
	s, err := popstore.Open(popstore.Options{Dir: b.TempDir(), BlobMinBytes: minBlob, CommitLogMinBytes: clog, Statistics: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	pool := make([]byte, 16<<20)
	rng := rand.NewChaCha8([32]byte{1})
	_, _ = rng.Read(pool)
	const perWrite = 256
	w0, cpu0 := selfWriteBytes(b), selfCPU(b)
	b.ResetTimer()
	for i := 0; i < b.N; {
		tx := s.Begin()
		err := tx.Do(func(tx *popstore.Txn) error {
			for k := 0; k < perWrite && i+k < b.N; k++ {
				n := i + k
				off := (n * 7919 * 1031) % (len(pool) - body)
				q := int32(n % 8)
				if _, _, err := tx.AppendMessage("T", q, popstoretest.Record("T", q, 1, pool[off:off+body])); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
		i += perWrite
	}
	if err := s.FlushMemtables(true); err != nil {
		b.Fatal(err)
	}
	if !s.WaitCompactions(600, func() { time.Sleep(100 * time.Millisecond) }) {
		b.Log("compactions still running after 60 s")
	}
	b.StopTimer()
	payload := float64(b.N) * float64(body)
	b.ReportMetric(float64(selfWriteBytes(b)-w0)/payload, "disk-B/payload-B")
	b.ReportMetric((selfCPU(b)-cpu0).Seconds()*1e6/float64(b.N), "cpu-µs/msg")
	for _, t := range []struct{ ticker, unit string }{
		{"rocksdb.wal.bytes", "wal-B/payload-B"},
		{"rocksdb.flush.write.bytes", "flush-B/payload-B"},
		{"rocksdb.compact.write.bytes", "compact-B/payload-B"},
		{"rocksdb.blobdb.blob.file.bytes.written", "blob-B/payload-B"},
	} {
		b.ReportMetric(float64(s.StatsTicker(t.ticker))/payload, t.unit)
	}
	b.ReportMetric(float64(s.StatsTicker("rocksdb.stall.micros"))/1e3, "stall-ms")
	b.Logf("messages family: %s blob files, %s bytes live in blob files", s.MessagesProperty("rocksdb.num-blob-files"), s.MessagesProperty("rocksdb.live-blob-file-size"))
}

// selfCPU is the user+system CPU time of the whole process, every thread
// (RocksDB's flush and compaction threads included).
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// selfWriteBytes is write_bytes of /proc/self/io.
func selfWriteBytes(b *testing.B) uint64 {
	raw, err := os.ReadFile("/proc/self/io")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "write_bytes: "); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			if err != nil {
				b.Fatal(fmt.Errorf("write_bytes: %w", err))
			}
			return n
		}
	}
	b.Fatal("no write_bytes in /proc/self/io")
	return 0
}
