package popstore_test

import (
	"errors"
	"fmt"
	"net/netip"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

const hourMs = 3600 * 1000

// keyedRecord is a record of topic/queue 0 stored at ts with the given KEYS
// and UNIQ_KEY properties (either may be "": left out).
func keyedRecord(t *testing.T, topic string, ts int64, keys, uniq string) []byte {
	return taggedRecord(t, topic, ts, "", keys, uniq)
}

// taggedRecord is keyedRecord with a TAGS property (left out when "").
func taggedRecord(t *testing.T, topic string, ts int64, tags, keys, uniq string) []byte {
	t.Helper()
	props := ""
	var err error
	if tags != "" {
		props, err = codec.SetProperty(props, codec.PropertyTags, tags)
		require.NoError(t, err)
	}
	if keys != "" {
		props, err = codec.SetProperty(props, codec.PropertyKeys, keys)
		require.NoError(t, err)
	}
	if uniq != "" {
		props, err = codec.SetProperty(props, codec.PropertyUniqClientMessageIDKeyIdx, uniq)
		require.NoError(t, err)
	}
	m := codec.MessageExt{
		Message:        codec.Message{Topic: topic, Body: []byte("body of " + uniq), Properties: props},
		BornTimestamp:  ts,
		StoreTimestamp: ts,
		BornHost:       netip.MustParseAddrPort("127.0.0.1:5000"),
		StoreHost:      netip.MustParseAddrPort("127.0.0.1:10911"),
	}
	rec, err := codec.AppendMessage(nil, &m)
	require.NoError(t, err)
	return rec
}

// appendKeyed appends one keyed record and returns its physical offset.
func appendKeyed(t *testing.T, s *popstore.Store, topic string, ts int64, keys, uniq string) int64 {
	t.Helper()
	var phys int64
	commit(t, s, func(tx *popstore.Txn) (err error) {
		_, phys, err = tx.AppendMessage(topic, 0, keyedRecord(t, topic, ts, keys, uniq))
		return err
	})
	return phys
}

// uniqs returns the UNIQ_KEY of each record.
func uniqs(t *testing.T, recs [][]byte) []string {
	t.Helper()
	var out []string
	for _, r := range recs {
		m, _, err := codec.DecodeMessage(r)
		require.NoError(t, err)
		u, _ := m.Property(codec.PropertyUniqClientMessageIDKeyIdx)
		out = append(out, u)
	}
	return out
}

func query(t *testing.T, s *popstore.Store, topic, key string, maxNum int, begin, end int64) []string {
	t.Helper()
	res, err := s.QueryMessagesByKey(topic, popstore.IndexKeys, key, maxNum, 1<<30, begin, end)
	require.NoError(t, err)
	return uniqs(t, res.Records)
}

// TestKeyIndexSameBatch: the index entries are part of the message's own
// WriteBatch (one per KEYS element and one for UNIQ_KEY), vanish with an op
// that fails, and are durable across a restart.
func TestKeyIndexSameBatch(t *testing.T) {
	dir := t.TempDir()
	s, err := popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	const ts = 500 * hourMs
	tx := s.Begin()
	require.NoError(t, tx.Do(func(tx *popstore.Txn) error {
		_, _, err := tx.AppendMessage("T", 0, keyedRecord(t, "T", ts, "k1  k2 ", "U1"))
		return err
	}))
	require.Equal(t, 2+3, tx.Count(), "record, physical index, UNIQ_KEY, k1, k2 in one batch")
	require.Error(t, tx.Do(func(tx *popstore.Txn) error {
		if _, _, err := tx.AppendMessage("T", 0, keyedRecord(t, "T", ts, "gone", "U-gone")); err != nil {
			return err
		}
		return errors.New("op fails")
	}))
	require.Equal(t, 5, tx.Count(), "the failed op's entries are rolled back with its message")
	require.NoError(t, tx.Commit())
	require.Equal(t, 3, s.KeyIndexEntries())

	require.NoError(t, s.Close())
	s, err = popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, []string{"U1"}, query(t, s, "T", "k1", 32, 0, 1<<62))
	require.Equal(t, []string{"U1"}, query(t, s, "T", "k2", 32, 0, 1<<62))
	require.Equal(t, []string{"U1"}, query(t, s, "T", "U1", 32, 0, 1<<62))
	require.Empty(t, query(t, s, "T", "gone", 32, 0, 1<<62))
	require.Empty(t, query(t, s, "T", "U-gone", 32, 0, 1<<62))
}

// TestKeyIndexQuery: space-separated keys, other topics, the time range
// (inclusive, across buckets), maxNum (newest kept, answered by ascending
// physical offset, capped at 64).
func TestKeyIndexQuery(t *testing.T) {
	s, _ := popstoretest.Open(t, popstore.Options{})
	base := int64(1000 * hourMs)
	appendKeyed(t, s, "T", base, "a b", "U0")
	appendKeyed(t, s, "T", base+10, "b", "U1")
	appendKeyed(t, s, "T", base+3*hourMs, "b c", "U2")
	appendKeyed(t, s, "T", base+30*hourMs, "b", "U3")
	appendKeyed(t, s, "Other", base, "b", "X0")

	require.Equal(t, []string{"U0"}, query(t, s, "T", "a", 32, 0, 1<<62))
	require.Equal(t, []string{"U0", "U1", "U2", "U3"}, query(t, s, "T", "b", 32, 0, 1<<62))
	require.Equal(t, []string{"X0"}, query(t, s, "Other", "b", 32, 0, 1<<62))
	require.Empty(t, query(t, s, "T", "a b", 32, 0, 1<<62), "the KEYS string is split on spaces")
	require.Empty(t, query(t, s, "Missing", "b", 32, 0, 1<<62))
	require.Empty(t, query(t, s, "T", "", 32, 0, 1<<62))

	require.Equal(t, []string{"U1", "U2"}, query(t, s, "T", "b", 32, base+10, base+3*hourMs), "both ends inclusive")
	require.Equal(t, []string{"U1"}, query(t, s, "T", "b", 32, base+1, base+3*hourMs-1))
	require.Empty(t, query(t, s, "T", "b", 32, base+4*hourMs, base+29*hourMs))
	require.Empty(t, query(t, s, "T", "b", 32, base+20, base+10), "end before begin")
	for _, end := range []int64{1 << 32 * 60000, 1<<32*60000 + base, 1<<63 - 1} {
		require.Equal(t, []string{"U0", "U1", "U2", "U3"}, query(t, s, "T", "b", 32, 0, end), "end %d, past the last minute", end)
	}

	require.Equal(t, []string{"U2", "U3"}, query(t, s, "T", "b", 2, 0, 1<<62), "maxNum keeps the newest")
	one := len(keyedRecord(t, "T", base, "b", "U0"))
	res, err := s.QueryMessagesByKey("T", popstore.IndexKeys, "b", 32, 2*one+one/2, 0, 1<<62)
	require.NoError(t, err)
	require.Equal(t, []string{"U2", "U3"}, uniqs(t, res.Records), "maxBytes keeps the newest that fit")
	res, err = s.QueryMessagesByKey("T", popstore.IndexKeys, "b", 32, 1, 0, 1<<62)
	require.NoError(t, err)
	require.Equal(t, []string{"U3"}, uniqs(t, res.Records), "at least one")
	require.Empty(t, query(t, s, "T", "b", 0, 0, 1<<62))

	commit(t, s, func(tx *popstore.Txn) error {
		for i := 0; i < 70; i++ {
			if _, _, err := tx.AppendMessage("M", 0, keyedRecord(t, "M", base+int64(i), "many", fmt.Sprintf("M%02d", i))); err != nil {
				return err
			}
		}
		return nil
	})
	got := query(t, s, "M", "many", 1000, 0, 1<<62)
	require.Len(t, got, popstore.MaxQueryMessages)
	require.Equal(t, "M06", got[0])
	require.Equal(t, "M69", got[63])
}

// TestKeyIndexRetention: retention removes the index minutes before the cutoff
// with the messages; entries of a deleted topic find nothing, also after the
// topic is created again.
func TestKeyIndexRetention(t *testing.T) {
	var now atomic.Int64
	now.Store(2000 * hourMs)
	s, _ := popstoretest.Open(t, popstore.Options{RetentionMillis: 10 * hourMs, NowMillis: now.Load})
	appendKeyed(t, s, "T", now.Load()-20*hourMs, "k", "OLD")
	appendKeyed(t, s, "T", now.Load()-hourMs, "k", "NEW")
	require.Equal(t, 4, s.KeyIndexEntries())

	plan, err := s.PlanRetention(now.Load())
	require.NoError(t, err)
	require.NotEmpty(t, plan.Trims)
	commit(t, s, func(tx *popstore.Txn) error { return tx.ApplyRetention(plan) })
	s.CompactTrimmed(plan)
	require.Equal(t, 2, s.KeyIndexEntries(), "the old message's entries went with it")
	require.Equal(t, []string{"NEW"}, query(t, s, "T", "k", 32, 0, 1<<62))
	require.Empty(t, query(t, s, "T", "OLD", 32, 0, 1<<62))

	commit(t, s, func(tx *popstore.Txn) error { return tx.DeleteTopic("T") })
	require.Empty(t, query(t, s, "T", "k", 32, 0, 1<<62), "deleted topic")
	appendKeyed(t, s, "T", now.Load(), "other", "AGAIN")
	appendKeyed(t, s, "T", now.Load(), "other", "AGAIN2")
	require.Empty(t, query(t, s, "T", "k", 32, 0, 1<<62), "re-created topic: old entries point at nothing")
	require.Equal(t, []string{"AGAIN", "AGAIN2"}, query(t, s, "T", "other", 32, 0, 1<<62))
}

// TestKeyIndexDisabled: with DisableMessageIndex nothing is indexed.
func TestKeyIndexDisabled(t *testing.T) {
	s, _ := popstoretest.Open(t, popstore.Options{DisableMessageIndex: true})
	tx := s.Begin()
	require.NoError(t, tx.Do(func(tx *popstore.Txn) error {
		_, _, err := tx.AppendMessage("T", 0, keyedRecord(t, "T", hourMs, "k", "U"))
		return err
	}))
	require.Equal(t, 2, tx.Count())
	require.NoError(t, tx.Commit())
	require.Empty(t, query(t, s, "T", "k", 32, 0, 1<<62))
	require.Equal(t, 0, s.KeyIndexEntries())
}

// TestKeyIndexTags: TAGS is indexed as its own kind (5.5's "T" index type),
// apart from KEYS and UNIQ_KEY.
func TestKeyIndexTags(t *testing.T) {
	s, _ := popstoretest.Open(t, popstore.Options{})
	tx := s.Begin()
	require.NoError(t, tx.Do(func(tx *popstore.Txn) error {
		if _, _, err := tx.AppendMessage("T", 0, taggedRecord(t, "T", hourMs, "TagA", "k", "U1")); err != nil {
			return err
		}
		_, _, err := tx.AppendMessage("T", 0, taggedRecord(t, "T", hourMs, "", "TagA", "U2"))
		return err
	}))
	require.Equal(t, 2+1+3+2, tx.Count(), "records, the first's physical index entry (the second's comes at Commit, when the batch stays inline), TAGS+KEYS+UNIQ_KEY of the first, KEYS+UNIQ_KEY of the second")
	require.NoError(t, tx.Commit())
	tagged := func(key string) []string {
		res, err := s.QueryMessagesByKey("T", popstore.IndexTags, key, 32, 1<<30, 0, 1<<62)
		require.NoError(t, err)
		return uniqs(t, res.Records)
	}
	require.Equal(t, []string{"U1"}, tagged("TagA"))
	require.Empty(t, tagged("k"))
	require.Equal(t, []string{"U2"}, query(t, s, "T", "TagA", 32, 0, 1<<62), "the key index does not hold tags")
}

// TestEarliestMessageTime: -1 when empty, else the store time of the oldest
// message still stored, also when the oldest physical entries belong to a
// deleted topic.
func TestEarliestMessageTime(t *testing.T) {
	s, _ := popstoretest.Open(t, popstore.Options{})
	ts, err := s.EarliestMessageTime()
	require.NoError(t, err)
	require.Equal(t, int64(-1), ts)
	commit(t, s, func(tx *popstore.Txn) error {
		for i := range 20 {
			if _, _, err := tx.AppendMessage("Old", 0, keyedRecord(t, "Old", 1000+int64(i), "", "")); err != nil {
				return err
			}
		}
		return nil
	})
	appendKeyed(t, s, "A", 5000, "", "")
	appendKeyed(t, s, "B", 4000, "", "")
	ts, err = s.EarliestMessageTime()
	require.NoError(t, err)
	require.Equal(t, int64(1000), ts)
	commit(t, s, func(tx *popstore.Txn) error { return tx.DeleteTopic("Old") })
	ts, err = s.EarliestMessageTime()
	require.NoError(t, err)
	require.Equal(t, int64(4000), ts, "20 stale physical entries first: falls back to the queues")
}
