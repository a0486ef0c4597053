package popstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

func TestCheckpointsScanReplaceAndOverlay(t *testing.T) {
	s, _ := popstoretest.Open(t, popstore.Options{})
	key := func(vis, off int64) popstore.CheckpointKey {
		return popstore.CheckpointKey{VisibleAtMillis: vis, Group: "G", Topic: "T", QueueId: 1, QueueOffset: off}
	}
	commit(t, s, func(tx *popstore.Txn) error {
		for i := int64(0); i < 10; i++ {
			if err := tx.PutCheckpoint(popstore.Checkpoint{Key: key(1000+i*100, i), PopTimeMillis: 1000, InvisibleTimeMillis: i * 100, AttemptId: "a"}); err != nil {
				return err
			}
		}
		return nil
	})
	// [lower, upper) on visibleAt, key order, limit.
	cks, err := s.ScanCheckpoints(1200, 1500, 100)
	require.NoError(t, err)
	require.Len(t, cks, 3)
	require.Equal(t, int64(1200), cks[0].Key.VisibleAtMillis)
	require.Equal(t, int64(1400), cks[2].Key.VisibleAtMillis)
	require.Equal(t, "a", cks[0].AttemptId)
	cks, err = s.ScanCheckpoints(0, 1<<62, 4)
	require.NoError(t, err)
	require.Len(t, cks, 4)

	tx := s.Begin()
	// Same-key CHANGE: the delete is skipped, the new value wins.
	require.NoError(t, tx.Do(func(tx *popstore.Txn) error {
		return tx.ReplaceCheckpoint(key(1000, 0), popstore.Checkpoint{Key: key(1000, 0), PopTimeMillis: 900, InvisibleTimeMillis: 100})
	}))
	// Different-key CHANGE: new put, old delete.
	require.NoError(t, tx.Do(func(tx *popstore.Txn) error {
		return tx.ReplaceCheckpoint(key(1100, 1), popstore.Checkpoint{Key: key(9000, 1), PopTimeMillis: 8000, InvisibleTimeMillis: 1000})
	}))
	// Reads see the batch being built (house style 11).
	got, ok, err := tx.GetCheckpoint(key(1000, 0))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(900), got.PopTimeMillis)
	_, ok, _ = tx.GetCheckpoint(key(1100, 1))
	require.False(t, ok)
	_, ok, _ = s.Checkpoint(key(9000, 1))
	require.False(t, ok, "not durable yet, not visible to store readers")
	require.NoError(t, tx.Commit())

	got, ok, err = s.Checkpoint(key(1000, 0))
	require.NoError(t, err)
	require.True(t, ok, "same-key replacement must leave the record present")
	require.Equal(t, int64(900), got.PopTimeMillis)
	_, ok, _ = s.Checkpoint(key(1100, 1))
	require.False(t, ok)
	_, ok, _ = s.Checkpoint(key(9000, 1))
	require.True(t, ok)
}

func TestOffsetsAndMetadataSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	commit(t, s, func(tx *popstore.Txn) error {
		require.NoError(t, tx.PutTopic(popstore.TopicMeta{TopicName: "T", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6, Attributes: map[string]string{"+message.type": "NORMAL"}}))
		require.NoError(t, tx.PutGroup(popstore.GroupMeta{GroupName: "G", ConsumeEnable: true, RetryMaxTimes: 16}))
		require.NoError(t, tx.PutGroup(popstore.GroupMeta{GroupName: "Gone"}))
		require.NoError(t, tx.SetConsumerOffset("G", "T", 3, 42))
		require.NoError(t, tx.PutMetaValue("reviveCursor", []byte{1, 2}))
		return tx.SetConsumerOffset("G", "T", 2, 7)
	})
	commit(t, s, func(tx *popstore.Txn) error { return tx.DeleteGroup("Gone") })
	m, ok := s.Topic("T")
	require.True(t, ok)
	m.Attributes["+message.type"] = "changed by caller"
	require.NoError(t, s.Close())

	s, err = popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	defer s.Close()
	m, ok = s.Topic("T")
	require.True(t, ok)
	require.Equal(t, int32(4), m.ReadQueueNums)
	require.Equal(t, "NORMAL", m.Attributes["+message.type"])
	require.Len(t, s.Groups(), 1)
	g, ok := s.Group("G")
	require.True(t, ok)
	require.True(t, g.ConsumeEnable)
	off, ok := s.ConsumerOffset("G", "T", 3)
	require.True(t, ok)
	require.Equal(t, int64(42), off)
	_, ok = s.ConsumerOffset("G", "T", 1)
	require.False(t, ok)
	require.Equal(t, map[int32]int64{2: 7, 3: 42}, s.ConsumerOffsetsOf("G", "T"))
	v, err := s.MetaValue("reviveCursor")
	require.NoError(t, err)
	require.Equal(t, []byte{1, 2}, v)
}

func TestDeleteTopic(t *testing.T) {
	s, _ := popstoretest.Open(t, popstore.Options{})
	commit(t, s, func(tx *popstore.Txn) error { return tx.PutTopic(popstore.TopicMeta{TopicName: "T"}) })
	appendN(t, s, "T", 0, 0, 5, 1)
	appendN(t, s, "T", 1, 0, 3, 1)
	appendN(t, s, "TT", 0, 0, 2, 1) // a topic whose name extends "T" must survive
	commit(t, s, func(tx *popstore.Txn) error { return tx.SetConsumerOffset("G", "T", 0, 5) })
	commit(t, s, func(tx *popstore.Txn) error { return tx.DeleteTopic("T") })
	_, ok := s.Topic("T")
	require.False(t, ok)
	require.Equal(t, int64(0), s.MaxOffset("T", 0))
	_, ok = s.ConsumerOffset("G", "T", 0)
	require.False(t, ok)
	recs, _, err := s.ReadMessages("TT", 0, 0, 10, 1<<20)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	appendN(t, s, "T", 0, 0, 1, 1)
	recs, _, err = s.ReadMessages("T", 0, 0, 10, 1<<20)
	require.NoError(t, err)
	require.Len(t, recs, 1, "re-created topic starts empty at offset 0")
	require.Equal(t, int64(0), popstoretest.QueueOffset(recs[0]))
}
