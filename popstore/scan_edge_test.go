package popstore_test

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

// edgeBody is the body stored at offset i by the tests below: its size
// cycles through sizes, its bytes name the offset.
func edgeBody(i int64, sizes []int) []byte {
	return bytes.Repeat([]byte{byte('a' + i%26)}, sizes[i%int64(len(sizes))])
}

// TestScanRangeEdgeSizes compares ReadMessages and ReadMessagesInto (one
// ReadBuffer reused throughout) with the Iterator path over empty bodies,
// 4 MiB bodies (past every buffer guess: the scanRoom path) and records
// between, for budgets at, one below and one above each prefix sum, and
// counts of exactly the records there.
func TestScanRangeEdgeSizes(t *testing.T) {
	s, _ := popstoretest.Open(t, popstore.Options{})
	sizes := []int{0, 4 << 20, 0, 1, 4<<20 + 1, 100, 0, 70_000}
	commit(t, s, func(tx *popstore.Txn) error {
		for i := range int64(2 * len(sizes)) {
			if _, _, err := tx.AppendMessage("T", 0, popstoretest.Record("T", 0, 1000, edgeBody(i, sizes))); err != nil {
				return err
			}
		}
		return nil
	})
	var rb popstore.ReadBuffer
	n := int64(2 * len(sizes))
	for _, from := range []int64{0, 3, n - 1} {
		all, _, err := s.ReadMessagesByIterator("T", 0, from, int(n), 1<<40)
		require.NoError(t, err)
		budgets := []int{0, 1}
		sum := 0
		for _, r := range all {
			sum += len(r)
			budgets = append(budgets, sum-1, sum, sum+1)
		}
		for _, maxCount := range []int{1, len(all), len(all) + 1} {
			for _, maxBytes := range budgets {
				name := fmt.Sprintf("from=%d count=%d bytes=%d", from, maxCount, maxBytes)
				want, wantNext, err := s.ReadMessagesByIterator("T", 0, from, maxCount, maxBytes)
				require.NoError(t, err, name)
				for _, avg := range []int64{1, 4 << 20} {
					s.SetRecordAvg("T", 0, avg)
					got, next, err := s.ReadMessages("T", 0, from, maxCount, maxBytes)
					require.NoError(t, err, name)
					require.Equal(t, wantNext, next, name)
					requireSameRecords(t, want, got, name)
					s.SetRecordAvg("T", 0, avg)
					got, next, err = s.ReadMessagesInto(&rb, "T", 0, from, maxCount, maxBytes)
					require.NoError(t, err, name)
					require.Equal(t, wantNext, next, name)
					requireSameRecords(t, want, got, name+" (reused buffer)")
				}
			}
		}
	}
}

func requireSameRecords(t *testing.T, want, got [][]byte, name string) {
	t.Helper()
	require.Equal(t, len(want), len(got), name)
	for i := range want {
		require.True(t, bytes.Equal(want[i], got[i]), "%s: record %d", name, i)
		require.Equal(t, len(got[i]), cap(got[i]), "%s: record %d capacity not clipped", name, i)
	}
}

// TestReadMessagesIntoRacesTrimAndClose runs readers, each with its own
// ReadBuffer, against appends, retention trims with CompactTrimmed,
// memtable flushes and finally Close: every record a read returns is the
// one stored at its offset, offsets ascend from the one asked for, and a
// read after Close fails with ErrClosed (under -race, and without touching
// the closed C handles).
func TestReadMessagesIntoRacesTrimAndClose(t *testing.T) {
	var now atomic.Int64
	now.Store(1_000_000)
	s, _ := popstoretest.Open(t, popstore.Options{RetentionMillis: 1000, NowMillis: now.Load})
	sizes := []int{10, 3000, 0, 200, 20_000, 1}
	var appended atomic.Int64
	appendBatch := func(k int64) {
		commit(t, s, func(tx *popstore.Txn) error {
			for range k {
				i := appended.Load()
				rec := popstoretest.Record("T", 0, now.Load(), edgeBody(i, sizes))
				if _, _, err := tx.AppendMessage("T", 0, rec); err != nil {
					return err
				}
				appended.Add(1)
			}
			return nil
		})
	}
	appendBatch(50)
	stop := make(chan struct{})
	var readers sync.WaitGroup
	var reads, closedSeen atomic.Int64
	var failure atomic.Pointer[string]
	fail := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		failure.CompareAndSwap(nil, &msg)
	}
	for r := range 4 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			var rb popstore.ReadBuffer
			for i := 0; ; i++ {
				from := int64((i*7 + r*13) % int(max(appended.Load(), 1)))
				var recs [][]byte
				var err error
				if r == 0 {
					recs, _, err = s.ReadMessages("T", 0, from, 1+i%40, 1+(i*977)%60_000)
				} else {
					recs, _, err = s.ReadMessagesInto(&rb, "T", 0, from, 1+i%40, 1+(i*977)%60_000)
				}
				if err != nil {
					if errors.Is(err, popstore.ErrClosed) {
						closedSeen.Add(1)
						return
					}
					fail("read: %v", err)
					return
				}
				reads.Add(1)
				prev := from - 1
				for _, rec := range recs {
					off := popstoretest.QueueOffset(rec)
					if off <= prev {
						fail("offset %d after %d (from %d)", off, prev, from)
						return
					}
					if !bytes.Equal(popstoretest.Body(rec), edgeBody(off, sizes)) {
						fail("record at offset %d has another body", off)
						return
					}
					prev = off
				}
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
	}
	for round := range 30 {
		appendBatch(20)
		now.Add(100)
		plan, err := s.PlanRetention(now.Load())
		require.NoError(t, err)
		commit(t, s, func(tx *popstore.Txn) error { return tx.ApplyRetention(plan) })
		if round%5 == 0 {
			require.NoError(t, s.FlushMemtables(round%10 == 0))
		}
		s.CompactTrimmed(plan)
	}
	require.Greater(t, s.MinOffset("T", 0), int64(0), "retention trimmed nothing")
	require.NoError(t, s.Close())
	close(stop)
	readers.Wait()
	if msg := failure.Load(); msg != nil {
		t.Fatal(*msg)
	}
	require.Greater(t, reads.Load(), int64(30))
	var rb popstore.ReadBuffer
	_, _, err := s.ReadMessagesInto(&rb, "T", 0, 0, 10, 1<<20)
	require.ErrorIs(t, err, popstore.ErrClosed)
}
