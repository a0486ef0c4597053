package popstore_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/popstore"
)

// The in-memory in-flight counts follow every checkpoint put, delete and
// replace (same key and new key), ignore a rolled-back op, and equal the
// exact key scan after random Txns, after Reopen and after a fresh Open
// (a put over a live key would count twice; POP and CHANGE never write
// one, see inflightCounts);
// a blind delete of a missing checkpoint never makes a count negative.
func TestInflightCheckpointsTrackWrites(t *testing.T) {
	dir := t.TempDir()
	s, err := popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(7, 11))
	live := map[popstore.CheckpointKey]bool{}
	// key is a checkpoint key not live yet: a POP or CHANGE writes a key
	// of its own popTime and offset, never one already in flight.
	key := func() popstore.CheckpointKey {
		for {
			k := popstore.CheckpointKey{VisibleAtMillis: 1000 + int64(rng.IntN(50)),
				Group: []string{"G1", "G2", "G3"}[rng.IntN(3)], Topic: []string{"T", "U"}[rng.IntN(2)],
				QueueId: int32(rng.IntN(2)), QueueOffset: int64(rng.IntN(40))}
			if !live[k] {
				return k
			}
		}
	}
	errRollback := errors.New("rolled back")
	exact := func() map[popstore.GroupTopic]int64 {
		counts, complete, err := s.CountCheckpoints(math.MaxInt)
		require.NoError(t, err)
		require.True(t, complete)
		return counts
	}
	check := func(when string) {
		got, ok := s.InflightCheckpoints(100)
		require.True(t, ok)
		require.Equal(t, exact(), got, when)
	}
	for round := 0; round < 200; round++ {
		tx := s.Begin()
		for op := 0; op < 1+rng.IntN(8); op++ {
			k := key()
			switch rng.IntN(4) {
			case 0, 1: // POP
				require.NoError(t, tx.Do(func(tx *popstore.Txn) error {
					return tx.PutCheckpoint(popstore.Checkpoint{Key: k, InvisibleTimeMillis: 1})
				}))
				live[k] = true
			case 2: // ACK of a checkpoint that exists (a blind one is below)
				for l := range live {
					k = l
					break
				}
				if !live[k] {
					continue
				}
				require.NoError(t, tx.Do(func(tx *popstore.Txn) error { return tx.DeleteCheckpoint(k) }))
				delete(live, k)
			case 3: // CHANGE to a new key or to the same key; sometimes rolled back
				var old popstore.CheckpointKey
				for l := range live {
					old = l
					break
				}
				if !live[old] {
					continue
				}
				nk := old
				if rng.IntN(2) == 0 {
					nk = key()
				}
				rollback := rng.IntN(4) == 0
				err := tx.Do(func(tx *popstore.Txn) error {
					if err := tx.ReplaceCheckpoint(old, popstore.Checkpoint{Key: nk, InvisibleTimeMillis: 2}); err != nil {
						return err
					}
					if rollback {
						return errRollback
					}
					return nil
				})
				if rollback {
					require.ErrorIs(t, err, errRollback)
					continue
				}
				require.NoError(t, err)
				delete(live, old)
				live[nk] = true
			}
		}
		require.NoError(t, tx.Commit())
		if round%50 == 49 {
			check("after round")
		}
	}
	check("after 200 Txns")
	require.NoError(t, s.Reopen())
	check("after Reopen")
	require.NoError(t, s.Close())
	s, err = popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	check("after Open")
	before, _ := s.InflightCheckpoints(100)
	require.NotEmpty(t, before)

	// A blind ACK of a missing checkpoint: never below zero, and a pair
	// with nothing in flight is not reported.
	gone := popstore.CheckpointKey{VisibleAtMillis: 1, Group: "G9", Topic: "T", QueueId: 0, QueueOffset: 1}
	commit(t, s, func(tx *popstore.Txn) error { return tx.DeleteCheckpoint(gone) })
	got, _ := s.InflightCheckpoints(100)
	require.Equal(t, before, got)
	_, ok := s.InflightCheckpoints(len(before) - 1)
	require.False(t, ok, "more pairs than allowed")
}
