package popstore_test

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

// TestKeyIndexHashCollision: entries name a hash of topic, kind and key,
// so a query checks every record it follows. With every key of every
// topic and kind colliding, each query still finds only its own
// messages, and maxNum counts only those.
func TestKeyIndexHashCollision(t *testing.T) {
	s, _ := popstoretest.Open(t, popstore.Options{})
	s.SetIndexHash(func([]byte) uint64 { return 7 })
	base := int64(1000 * hourMs)
	appendKeyed(t, s, "T", base, "a", "U0")
	appendKeyed(t, s, "T", base+1, "b", "U1")
	appendKeyed(t, s, "O", base+2, "a", "U2")
	commit(t, s, func(tx *popstore.Txn) error {
		_, _, err := tx.AppendMessage("T", 0, taggedRecord(t, "T", base+3, "a", "", "U3"))
		return err
	})
	for i := 0; i < 5; i++ {
		appendKeyed(t, s, "T", base+10+int64(i), "c", "")
	}
	require.Equal(t, []string{"U0"}, query(t, s, "T", "a", 32, 0, 1<<62))
	require.Equal(t, []string{"U0"}, query(t, s, "T", "a", 1, 0, 1<<62), "newer entries of other keys do not use up maxNum")
	require.Equal(t, []string{"U1"}, query(t, s, "T", "b", 32, 0, 1<<62))
	require.Equal(t, []string{"U2"}, query(t, s, "O", "a", 32, 0, 1<<62))
	require.Equal(t, []string{"U3"}, query(t, s, "T", "U3", 32, 0, 1<<62))
	res, err := s.QueryMessagesByKey("T", popstore.IndexTags, "a", 32, 1<<30, 0, 1<<62)
	require.NoError(t, err)
	require.Equal(t, []string{"U3"}, uniqs(t, res.Records))
	require.Empty(t, query(t, s, "T", "d", 32, 0, 1<<62))
}

// TestKeyIndexLegacyLayout: entries of the layout written before
// 2026-12-06 (a data directory of an older popshim) are still found,
// merged with the new ones in time order, also within one minute, and
// retention trims both.
func TestKeyIndexLegacyLayout(t *testing.T) {
	var now atomic.Int64
	base := int64(1000 * hourMs)
	now.Store(base + 3*hourMs)
	s, _ := popstoretest.Open(t, popstore.Options{RetentionMillis: 2 * hourMs, NowMillis: now.Load})
	appendKeyed(t, s, "T", base, "b", "U0")
	appendKeyed(t, s, "T", base+20, "b", "U1")
	appendKeyed(t, s, "T", base+2*hourMs, "b", "U4")
	require.NoError(t, s.KeyIndexToLegacy())
	require.Equal(t, 6, s.KeyIndexEntries())
	require.Equal(t, []string{"U0", "U1", "U4"}, query(t, s, "T", "b", 32, 0, 1<<62), "legacy entries alone")

	appendKeyed(t, s, "T", base+10, "b", "U2") // the same minute as U0 and U1
	appendKeyed(t, s, "T", base+hourMs, "b", "U3")
	require.Equal(t, 10, s.KeyIndexEntries())
	// Answers are in physical-offset order (U2 and U3 came last), the
	// newest by store time when maxNum cuts.
	require.Equal(t, []string{"U0", "U1", "U4", "U2", "U3"}, query(t, s, "T", "b", 32, 0, 1<<62))
	require.Equal(t, []string{"U1", "U4", "U3"}, query(t, s, "T", "b", 3, 0, 1<<62), "the newest, by store time across layouts")
	require.Equal(t, []string{"U0", "U2"}, query(t, s, "T", "b", 2, base, base+19), "within the minute of both layouts")
	require.Equal(t, []string{"U1", "U2"}, query(t, s, "T", "b", 32, base+10, base+20))
	require.Equal(t, []string{"U0"}, query(t, s, "T", "U0", 32, 0, 1<<62))
	require.Equal(t, []string{"U2"}, query(t, s, "T", "U2", 32, 0, 1<<62))

	plan, err := s.PlanRetention(now.Load())
	require.NoError(t, err)
	require.NotEmpty(t, plan.Trims)
	commit(t, s, func(tx *popstore.Txn) error { return tx.ApplyRetention(plan) })
	s.CompactTrimmed(plan)
	require.Equal(t, []string{"U4", "U3"}, query(t, s, "T", "b", 32, 0, 1<<62), "U3 is stored at the cutoff")
	require.Equal(t, 4, s.KeyIndexEntries(), "both layouts' entries before the cutoff are gone")
}
