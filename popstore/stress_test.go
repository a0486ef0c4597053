package popstore_test

// Stress test of the write path popstore builds by hand: the serialized
// WriteBatch of wbatch.go (count field, column family ids, records sorted by
// key with same-key records kept in op order, rollback by truncation) and
// the memtable insert hint of the pop and offsets families
// (memtable_insert_with_hint_prefix_extractor). It hammers a small key space
// with put / delete / replace (same key and other key) / read-then-replace
// sequences within one batch and across batches, with ops rolled back in
// the middle of a batch, range deletes in the messages family in the same
// batches, memtable switches (flushes) while writing, and concurrent
// committers (RocksDB then inserts into the memtable in parallel, next to
// the hinted inserts of single-writer groups). Every state is checked
// against a model, and again after a reopen (WAL replay inserts with the
// hint too).
//
// Debian's librocksdb is built with assertions enabled (the .so carries
// InlineSkipList::Insert's assert strings): a wrong splice (a hint used on
// the wrong skiplist, RocksDB #12558) or a duplicate (key, seqno) aborts
// this test process, which is the point.

import (
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

// stressKey is checkpoint key i of writer w (of n writers): writers'
// offsets interleave, so their keys are neighbours in the skiplist.
func stressKey(w, n, i int) popstore.CheckpointKey {
	return popstore.CheckpointKey{VisibleAtMillis: 1_000 + int64(i%3), Group: "G", Topic: "T", QueueId: int32(i % 2),
		QueueOffset: int64(i*n + w)}
}

// stressModel is the expected state of one writer's keys.
type stressModel struct {
	cks  map[popstore.CheckpointKey]int64 // key → PopTimeMillis of the live record
	offs map[int32]int64                  // consumer offsets of group "G<w>", topic "T", by queue
}

// stressWriter generates random ops for writer w and mirrors them in its
// model. Not safe for concurrent use; one per goroutine.
type stressWriter struct {
	w, n  int
	keys  int
	rng   *rand.Rand
	model stressModel
	stamp int64
}

func newStressWriter(w, n, keys int, seed int64) *stressWriter {
	return &stressWriter{w: w, n: n, keys: keys, rng: rand.New(rand.NewSource(seed)),
		model: stressModel{cks: map[popstore.CheckpointKey]int64{}, offs: map[int32]int64{}}}
}

func (sw *stressWriter) key() popstore.CheckpointKey {
	return stressKey(sw.w, sw.n, sw.rng.Intn(sw.keys))
}

func (sw *stressWriter) record(k popstore.CheckpointKey) popstore.Checkpoint {
	sw.stamp++
	return popstore.Checkpoint{Key: k, PopTimeMillis: sw.stamp, InvisibleTimeMillis: sw.stamp % 7,
		PhysicalOffset: sw.stamp, AttemptId: string(make([]byte, sw.rng.Intn(24)))}
}

var errStressRollback = errors.New("stress: rolled back")

// op returns one random op and the model change to apply if it succeeds.
// Some ops write and then fail: the Txn must drop their writes.
func (sw *stressWriter) op() (apply func(tx *popstore.Txn) error, commit func()) {
	var changes []func()
	put := func(tx *popstore.Txn, ck popstore.Checkpoint) error {
		changes = append(changes, func() { sw.model.cks[ck.Key] = ck.PopTimeMillis })
		return tx.PutCheckpoint(ck)
	}
	del := func(tx *popstore.Txn, k popstore.CheckpointKey) error {
		changes = append(changes, func() { delete(sw.model.cks, k) })
		return tx.DeleteCheckpoint(k)
	}
	group := fmt.Sprintf("G%d", sw.w)
	kind := sw.rng.Intn(8)
	fail := sw.rng.Intn(10) == 0
	apply = func(tx *popstore.Txn) error {
		changes = changes[:0]
		var err error
		switch kind {
		case 0, 1:
			err = put(tx, sw.record(sw.key()))
		case 2:
			err = del(tx, sw.key())
		case 3: // CHANGE to another key, or to the same key (delete skipped)
			old, nk := sw.key(), sw.key()
			if sw.rng.Intn(3) == 0 {
				nk = old
			}
			ck := sw.record(nk)
			changes = append(changes, func() { sw.model.cks[nk] = ck.PopTimeMillis })
			if old != nk {
				changes = append(changes, func() { delete(sw.model.cks, old) })
			}
			err = tx.ReplaceCheckpoint(old, ck)
		case 4: // CHANGE with the existence check (handler's CHANGE)
			old := sw.key()
			if _, ok, rerr := tx.GetCheckpoint(old); rerr != nil || !ok {
				return rerr
			}
			ck := sw.record(sw.key())
			changes = append(changes, func() { sw.model.cks[ck.Key] = ck.PopTimeMillis })
			if old != ck.Key {
				changes = append(changes, func() { delete(sw.model.cks, old) })
			}
			err = tx.ReplaceCheckpoint(old, ck)
		case 5: // put, delete, put the same key in one op
			k := sw.key()
			if err = put(tx, sw.record(k)); err == nil {
				if err = del(tx, k); err == nil {
					err = put(tx, sw.record(k))
				}
			}
		case 6:
			q, off := int32(sw.rng.Intn(2)), sw.rng.Int63n(1<<40)
			changes = append(changes, func() { sw.model.offs[q] = off })
			err = tx.SetConsumerOffset(group, "T", q, off)
		case 7:
			q := int32(sw.rng.Intn(2))
			changes = append(changes, func() { delete(sw.model.offs, q) })
			err = tx.DeleteConsumerOffset(group, "T", q)
		}
		if err == nil && fail {
			err = errStressRollback
		}
		return err
	}
	commit = func() {
		for _, c := range changes {
			c()
		}
	}
	return apply, commit
}

// batch builds and commits one Txn of up to maxOps random ops. extra, when
// not nil, adds writes of its own (messages) in the same Txn.
func (sw *stressWriter) batch(s *popstore.Store, maxOps int, extra func(tx *popstore.Txn) error) (records int, err error) {
	tx := s.Begin()
	var commits []func()
	for range 1 + sw.rng.Intn(maxOps) {
		apply, commit := sw.op()
		switch err := tx.Do(apply); {
		case err == nil:
			commits = append(commits, commit)
		case !errors.Is(err, errStressRollback):
			tx.Discard()
			return 0, fmt.Errorf("writer %d: apply: %w", sw.w, err)
		}
	}
	if extra != nil {
		if err := tx.Do(extra); err != nil {
			tx.Discard()
			return 0, fmt.Errorf("writer %d: messages: %w", sw.w, err)
		}
	}
	records = tx.Count()
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("writer %d: commit: %w", sw.w, err)
	}
	for _, c := range commits {
		c()
	}
	return records, nil
}

// check compares the store with the writer's model: every key of its key
// space, and (when offsets is set) its consumer offsets.
func (sw *stressWriter) check(t *testing.T, s *popstore.Store, offsets bool) {
	t.Helper()
	for i := range sw.keys {
		k := stressKey(sw.w, sw.n, i)
		got, ok, err := s.Checkpoint(k)
		require.NoError(t, err)
		want, live := sw.model.cks[k]
		require.Equal(t, live, ok, "writer %d key %d present", sw.w, i)
		if ok {
			require.Equal(t, want, got.PopTimeMillis, "writer %d key %d value", sw.w, i)
			require.Equal(t, want, got.PhysicalOffset)
		}
	}
	if offsets {
		for q := range int32(2) {
			off, ok := s.ConsumerOffset(fmt.Sprintf("G%d", sw.w), "T", q)
			want, live := sw.model.offs[q]
			require.Equal(t, live, ok, "writer %d offset q%d present", sw.w, q)
			require.Equal(t, want, off)
		}
	}
}

// messages appends n records to queue q of topic "S" and, when trimTo > 0,
// trims the queue below trimTo with a range delete, in the Txn of the op.
func messages(q int32, n int, trimTo int64) func(tx *popstore.Txn) error {
	return func(tx *popstore.Txn) error {
		for i := range n {
			if _, _, err := tx.AppendMessage("S", q, popstoretest.Record("S", q, 1, []byte{byte(i)})); err != nil {
				return err
			}
		}
		if trimTo > 0 {
			return tx.TrimQueue("S", q, trimTo)
		}
		return nil
	}
}

func TestWriteBatchStress(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	dir := t.TempDir()
	s, err := popstore.Open(popstore.Options{Dir: dir, RetentionMillis: -1})
	require.NoError(t, err)
	defer func() { _ = s.Close() }()

	// Phase 1: one writer (group mode). Batches without message writes must
	// advance RocksDB's sequence number by exactly their record count (the
	// count field matches the records; one sequence number each).
	const writers = 4
	sws := make([]*stressWriter, writers)
	for w := range sws {
		sws[w] = newStressWriter(w, writers, 40, seed+int64(w))
	}
	one := sws[0]
	for b := range 600 {
		var extra func(tx *popstore.Txn) error
		if b%4 == 3 {
			q := int32(b % 2)
			trim := int64(0)
			if b%20 == 19 {
				trim = s.MaxOffset("S", q) - 3
			}
			extra = messages(q, 1+b%5, trim)
		}
		seq := s.LatestSequenceNumber()
		n, err := one.batch(s, 48, extra)
		require.NoError(t, err)
		if extra == nil {
			require.Equal(t, uint64(n), s.LatestSequenceNumber()-seq, "batch %d: sequence numbers used", b)
		}
		if b%97 == 96 {
			require.NoError(t, s.FlushMemtables(false))
		}
		if b%50 == 49 {
			one.check(t, s, false)
		}
	}
	one.check(t, s, true)

	// Phase 2: concurrent committers on interleaved keys (RocksDB's parallel
	// memtable inserts), one of them also appending and range-deleting
	// messages, while memtables are flushed.
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for _, sw := range sws {
		wg.Add(1)
		go func(sw *stressWriter) {
			defer wg.Done()
			for b := range 250 {
				var extra func(tx *popstore.Txn) error
				if sw.w == 1 && b%5 == 0 {
					extra = messages(int32(b%2), 3, s.MaxOffset("S", int32(b%2))-2)
				}
				if _, err := sw.batch(s, 16, extra); err != nil {
					errs <- err
					return
				}
			}
		}(sw)
	}
	for range 5 {
		require.NoError(t, s.FlushMemtables(false))
		time.Sleep(20 * time.Millisecond)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, sw := range sws {
		sw.check(t, s, true)
	}
	for q := range int32(2) {
		minOff, maxOff := s.MinOffset("S", q), s.MaxOffset("S", q)
		recs, _, err := s.ReadMessages("S", q, 0, 1<<20, 1<<30)
		require.NoError(t, err)
		require.Len(t, recs, int(maxOff-minOff), "queue %d after range deletes", q)
	}
	cks, err := s.ScanCheckpoints(0, 1<<62, 1<<20)
	require.NoError(t, err)
	live := 0
	for _, sw := range sws {
		live += len(sw.model.cks)
	}
	require.Len(t, cks, live, "no stray checkpoints")

	// Reopen: WAL replay (memtable inserts with the hint again) and the
	// flushed files give the same state.
	require.NoError(t, s.Close())
	s, err = popstore.Open(popstore.Options{Dir: dir, RetentionMillis: -1})
	require.NoError(t, err)
	for _, sw := range sws {
		sw.check(t, s, true)
	}
}
