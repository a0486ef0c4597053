package popstore_test

import (
	"fmt"
	"net/netip"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// BenchmarkAppendKeyIndex measures the store side of SEND with the key index
// on and off, interleaved batch by batch on two stores in one run: batches
// of 64 SEND-shaped records (128-byte body, UNIQ_KEY, TAGS and keys KEYS
// elements) appended in one Txn and committed with one synced write, as the
// group-commit writer does. It reports the CPU time (user+system) of the
// committing thread per message for each store, on-cpu-ns/op and
// off-cpu-ns/op, and their ratio: the Go side, the WAL write and fsync and
// the memtable inserts all run on that thread (RocksDB's later flush and
// compaction do not, and are not counted). ns/op is wall time per message
// of both stores together, fsync waits included.
//
//	go test -run ^$ -bench AppendKeyIndex -benchtime 20000x -count 5 ./popstore/
func BenchmarkAppendKeyIndex(b *testing.B) {
	for _, keys := range []int{0, 2} {
		b.Run(fmt.Sprintf("keys=%d", keys), func(b *testing.B) { benchAppend(b, keys) })
	}
}

func benchAppend(b *testing.B, keys int) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var stores [2]*popstore.Store // 0: index on, 1: off
	for i := range stores {
		s, err := popstore.Open(popstore.Options{Dir: b.TempDir(), DisableMessageIndex: i == 1})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		stores[i] = s
	}
	body := make([]byte, 128)
	host := netip.MustParseAddrPort("127.0.0.1:10911")
	record := func(i int) []byte {
		props := fmt.Sprintf("UNIQ_KEY\x017F0000010001000000000000%08X\x02TAGS\x01TagA\x02", i)
		if keys > 0 {
			props += "KEYS\x01"
			for k := range keys {
				if k > 0 {
					props += " "
				}
				props += fmt.Sprintf("order-%x-%d", i*7919%100003, k)
			}
			props += "\x02"
		}
		m := codec.MessageExt{Message: codec.Message{Topic: "BenchTopic", Body: body, Properties: props},
			QueueID: int32(i % 8), BornHost: host, StoreHost: host, BornTimestamp: time.Now().UnixMilli(),
			StoreTimestamp: time.Now().UnixMilli()}
		rec, err := codec.AppendMessage(nil, &m)
		if err != nil {
			b.Fatal(err)
		}
		return rec
	}
	const batch = 64
	recs := make([][]byte, batch*16)
	for i := range recs {
		recs[i] = record(i)
	}
	var cpu [2]int64
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(batch, b.N-done)
		for si, s := range stores {
			t0 := threadCPU()
			tx := s.Begin()
			if err := tx.Do(func(tx *popstore.Txn) error {
				for i := range n {
					j := (done + i) % len(recs)
					if _, _, err := tx.AppendMessage("BenchTopic", int32(j%8), recs[j]); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				b.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				b.Fatal(err)
			}
			cpu[si] += threadCPU() - t0
		}
		done += n
	}
	b.StopTimer()
	b.ReportMetric(float64(cpu[0])/float64(b.N), "on-cpu-ns/op")
	b.ReportMetric(float64(cpu[1])/float64(b.N), "off-cpu-ns/op")
	b.ReportMetric(float64(cpu[0])/float64(cpu[1]), "on/off")
}

// threadCPU is the calling OS thread's user+system CPU time, ns.
func threadCPU() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(1, &ru) // RUSAGE_THREAD
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkQueryKeyIndex measures one QueryMessagesByKey (one key, one
// hit, time range 0 to the end of time) after 60,000 messages with
// UNIQ_KEY, TAGS and two KEYS each were appended: about 240,000 index
// entries, most of them still in the index family's vector memtable, which
// each query's iterator sorts. spread=72h stores them over 72 hours (every
// index minute bucket non-empty: 4,320 seeks per query), spread=0 within
// one minute.
//
//	go test -run ^$ -bench QueryKeyIndex ./popstore/
func BenchmarkQueryKeyIndex(b *testing.B) {
	for _, spread := range []time.Duration{0, 72 * time.Hour} {
		b.Run("spread="+spread.String(), func(b *testing.B) { benchQuery(b, spread) })
	}
}

func benchQuery(b *testing.B, spread time.Duration) {
	s, err := popstore.Open(popstore.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	host := netip.MustParseAddrPort("127.0.0.1:10911")
	now := time.Now().UnixMilli()
	step := spread.Milliseconds() / 60000
	for batch := range 60000 / 500 {
		tx := s.Begin()
		if err := tx.Do(func(tx *popstore.Txn) error {
			for i := range 500 {
				n := batch*500 + i
				m := codec.MessageExt{Message: codec.Message{Topic: "BenchTopic", Body: make([]byte, 128),
					Properties: fmt.Sprintf("UNIQ_KEY\x01U%08X\x02TAGS\x01TagA\x02KEYS\x01order-%d item-%d\x02", n, n*7919%100003, n)},
					QueueID: int32(n % 8), BornHost: host, StoreHost: host, BornTimestamp: now, StoreTimestamp: now - spread.Milliseconds() + int64(n)*step}
				rec, err := codec.AppendMessage(nil, &m)
				if err != nil {
					return err
				}
				if _, _, err := tx.AppendMessage("BenchTopic", int32(n%8), rec); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := range b.N {
		res, err := s.QueryMessagesByKey("BenchTopic", popstore.IndexKeys, fmt.Sprintf("item-%d", i%60000), 64, 1<<30, 0, 1<<62)
		if err != nil || len(res.Records) != 1 {
			b.Fatalf("query: %v, %d records", err, len(res.Records))
		}
	}
}

// BenchmarkKeyIndexWriteAmp appends b.N SEND-shaped records (128-byte
// body, a UNIQ_KEY as a client makes them and a TAGS value) round-robin
// over 8 queues, 256 per synced write, with the key index on and off,
// then waits for RocksDB's flushes and compactions to end. It reports the
// process's CPU time per message, every thread (the index family's
// flushes and compactions included), and its disk bytes and the index
// family's table-file bytes (flushes and compactions) per message.
//
//	go test -run '^$' -bench KeyIndexWriteAmp -benchtime 2000000x ./popstore/
func BenchmarkKeyIndexWriteAmp(b *testing.B) {
	for _, on := range []bool{true, false} {
		b.Run(fmt.Sprintf("index=%v", on), func(b *testing.B) {
			s, err := popstore.Open(popstore.Options{Dir: b.TempDir(), DisableMessageIndex: !on, Statistics: true})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			body := make([]byte, 128)
			host := netip.MustParseAddrPort("127.0.0.1:10911")
			m := codec.MessageExt{Message: codec.Message{Topic: "BenchTopic", Body: body},
				BornHost: host, StoreHost: host}
			var rec []byte
			const perWrite = 256
			w0, cpu0 := selfWriteBytes(b), selfCPU(b)
			b.ResetTimer()
			for i := 0; i < b.N; i += perWrite {
				tx := s.Begin()
				err := tx.Do(func(tx *popstore.Txn) error {
					for k := 0; k < perWrite && i+k < b.N; k++ {
						n := i + k
						m.QueueID = int32(n % 8)
						m.StoreTimestamp = time.Now().UnixMilli()
						m.BornTimestamp = m.StoreTimestamp
						m.Properties = fmt.Sprintf("UNIQ_KEY\x017F0000010D2A18B4AAC2%012X\x02TAGS\x01TagA\x02", n)
						if rec, err = codec.AppendMessage(rec[:0], &m); err != nil {
							return err
						}
						if _, _, err := tx.AppendMessage("BenchTopic", m.QueueID, rec); err != nil {
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
			}
			if err := s.FlushMemtables(true); err != nil {
				b.Fatal(err)
			}
			if !s.WaitCompactions(600, func() { time.Sleep(100 * time.Millisecond) }) {
				b.Log("compactions still running after 60 s")
			}
			b.StopTimer()
			b.ReportMetric((selfCPU(b)-cpu0).Seconds()*1e6/float64(b.N), "cpu-µs/msg")
			b.ReportMetric(float64(selfWriteBytes(b)-w0)/float64(b.N), "disk-B/msg")
			b.ReportMetric(float64(s.StatsTicker("rocksdb.flush.write.bytes")+s.StatsTicker("rocksdb.compact.write.bytes"))/float64(b.N), "tables-B/msg")
		})
	}
}
