package popstore_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

func fullGroup(name string) popstore.GroupMeta {
	g := popstore.NewGroupMeta(name)
	g.ConsumeEnable, g.ConsumeMessageOrderly, g.RetryMaxTimes, g.RetryQueueNums = false, true, 3, 2
	g.BrokerId, g.WhichBrokerWhenConsumeSlowly, g.ConsumeTimeoutMinute = 1, 0, 30
	g.Attributes = map[string]string{"priority.factor": "10"}
	g.GroupRetryPolicy = codec.GroupRetryPolicy{Type: codec.GroupRetryPolicyExponential,
		Exponential: &codec.ExponentialRetryPolicy{InitialMillis: 100, MaxMillis: 1000, Multiplier: 3},
		Customized:  &codec.CustomizedRetryPolicy{NextMillis: []int64{1, 2}}}
	g.SubscriptionDataSet = []codec.SimpleSubscriptionData{{Topic: "T", ExpressionType: "TAG", Expression: "*", Version: 9}}
	return g
}

// clock is a settable Options.NowMillis.
type clock struct{ ms atomic.Int64 }

func (c *clock) now() int64 { return c.ms.Load() }

// TestGroupsSurviveReopen writes groups through the batch writer (one synced
// WriteBatch each), reopens the database, and checks every field, the
// deletes and the table version.
func TestGroupsSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	var clk clock
	clk.ms.Store(1000)
	open := func() (*popstore.Store, *batch.Writer) {
		s, err := popstore.Open(popstore.Options{Dir: dir, NowMillis: clk.now})
		require.NoError(t, err)
		w, err := batch.New(s, batch.Options{RetentionInterval: -1}, nil)
		require.NoError(t, err)
		return s, w
	}
	shut := func(s *popstore.Store, w *batch.Writer) {
		require.NoError(t, w.Close())
		require.NoError(t, s.Close())
	}
	s, w := open()
	require.Equal(t, codec.DataVersion{Timestamp: 1000}, s.GroupsDataVersion(), "fresh database: counter 0, open time")
	full := fullGroup("G")
	require.NoError(t, w.SubmitWait(batch.LaneBackground, func(tx *popstore.Txn) error {
		if err := tx.PutGroup(full); err != nil {
			return err
		}
		if err := tx.PutGroup(popstore.NewGroupMeta("Plain")); err != nil {
			return err
		}
		return tx.PutGroup(popstore.NewGroupMeta("Gone"))
	}))
	clk.ms.Store(2000)
	require.NoError(t, w.SubmitWait(batch.LaneBackground, func(tx *popstore.Txn) error {
		require.NoError(t, tx.DeleteGroup("Gone"))
		return tx.DeleteGroup("NeverExisted") // no version step
	}))
	require.Equal(t, codec.DataVersion{Counter: 4, Timestamp: 2000}, s.GroupsDataVersion())
	require.Equal(t, []string{"G", "Plain"}, s.GroupNames())
	shut(s, w)

	s, w = open()
	g, ok := s.Group("G")
	require.True(t, ok)
	require.Equal(t, full, g)
	p, ok := s.Group("Plain")
	require.True(t, ok)
	require.Equal(t, popstore.NewGroupMeta("Plain"), p)
	require.Nil(t, p.Attributes, "empty attributes stay nil in memory")
	_, ok = s.Group("Gone")
	require.False(t, ok)
	require.Equal(t, codec.DataVersion{Counter: 4, Timestamp: 2000}, s.GroupsDataVersion())

	tbl := s.GroupTable()
	require.Equal(t, codec.DataVersion{Counter: 4, Timestamp: 2000}, tbl.DataVersion)
	require.Len(t, tbl.SubscriptionGroupTable, 2)
	require.Equal(t, full.Config(), tbl.SubscriptionGroupTable["G"])
	body := codec.AppendSubscriptionGroupWrapper(nil, &tbl)
	back, err := codec.DecodeSubscriptionGroupWrapper(body)
	require.NoError(t, err)
	require.Equal(t, tbl, back)

	clk.ms.Store(3000)
	require.NoError(t, w.SubmitWait(batch.LaneForeground, func(tx *popstore.Txn) error { return tx.DeleteGroup("G") }))
	shut(s, w)

	s, w = open()
	defer shut(s, w)
	_, ok = s.Group("G")
	require.False(t, ok, "delete survives reopen")
	require.Equal(t, []string{"Plain"}, s.GroupNames())
	require.Equal(t, codec.DataVersion{Counter: 5, Timestamp: 3000}, s.GroupsDataVersion())
}

// TestGroupLegacyValueLoads: a value written by json.Marshal of the first
// GroupMeta (no groupRetryPolicy, no subscriptionDataSet, attributes
// omitted) loads, missing members taking RocketMQ's defaults.
func TestGroupLegacyValueLoads(t *testing.T) {
	dir := t.TempDir()
	s, err := popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	commit(t, s, func(tx *popstore.Txn) error {
		tx.PutRawMeta("g/Old", []byte(`{"groupName":"Old","consumeEnable":true,"consumeFromMinEnable":true,"consumeBroadcastEnable":true,`+
			`"consumeMessageOrderly":false,"retryQueueNums":1,"retryMaxTimes":7,"brokerId":0,"whichBrokerWhenConsumeSlowly":1,`+
			`"notifyConsumerIdsChangedEnable":true,"groupSysFlag":0,"consumeTimeoutMinute":15}`))
		tx.PutRawMeta("g/Sparse", []byte(`{"retryMaxTimes":2}`))
		return nil
	})
	require.NoError(t, s.Close())
	s, err = popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	want := popstore.NewGroupMeta("Old")
	want.RetryMaxTimes = 7
	g, ok := s.Group("Old")
	require.True(t, ok)
	require.Equal(t, want, g)
	g, ok = s.Group("Sparse")
	require.True(t, ok, "the key names the group when the value does not")
	want = popstore.NewGroupMeta("Sparse")
	want.RetryMaxTimes = 2
	require.Equal(t, want, g)
	require.NoError(t, s.Close())

	// A value that is not a group at all stops Open with a clear error.
	s, err = popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	commit(t, s, func(tx *popstore.Txn) error { tx.PutRawMeta("g/Bad", []byte(`{"retryMaxTimes":"x"}`)); return nil })
	require.NoError(t, s.Close())
	_, err = popstore.Open(popstore.Options{Dir: dir})
	require.ErrorContains(t, err, `corrupt group "Bad"`)
	require.ErrorIs(t, err, codec.ErrInvalidField)
}

// TestGroupWritesRollBackAndIsolate: a failed op leaves neither its group
// nor its version step; readers never share memory with the table.
func TestGroupWritesRollBackAndIsolate(t *testing.T) {
	s, err := popstore.Open(popstore.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	defer s.Close()
	boom := errors.New("boom")
	tx := s.Begin()
	require.NoError(t, tx.Do(func(tx *popstore.Txn) error { return tx.PutGroup(popstore.NewGroupMeta("A")) }))
	require.ErrorIs(t, tx.Do(func(tx *popstore.Txn) error {
		require.NoError(t, tx.PutGroup(popstore.NewGroupMeta("B")))
		require.NoError(t, tx.DeleteGroup("A"))
		return boom
	}), boom)
	_, ok := tx.Group("A")
	require.True(t, ok, "rolled-back delete")
	_, ok = tx.Group("B")
	require.False(t, ok, "rolled-back put")
	_, ok = s.Group("A")
	require.False(t, ok, "not visible before Commit")
	require.NoError(t, tx.Commit())
	require.Equal(t, int64(1), s.GroupsDataVersion().Counter)
	require.Equal(t, []string{"A"}, s.GroupNames())

	require.ErrorIs(t, tx.PutGroup(popstore.NewGroupMeta("C")), popstore.ErrTxnDone)
	tx = s.Begin()
	require.ErrorIs(t, tx.PutGroup(popstore.GroupMeta{GroupName: "a@b"}), popstore.ErrBadName)
	tx.Discard()

	commit(t, s, func(tx *popstore.Txn) error { return tx.PutGroup(fullGroup("F")) })
	g, _ := s.Group("F")
	g.Attributes["priority.factor"] = "99"
	g.GroupRetryPolicy.Exponential.MaxMillis = 1
	g.GroupRetryPolicy.Customized.NextMillis[0] = 42
	g.SubscriptionDataSet[0].Topic = "changed"
	c := g.Config()
	c.Attributes["x"] = "y"
	again, _ := s.Group("F")
	require.Equal(t, fullGroup("F"), again)
	tbl := s.GroupTable()
	tbl.SubscriptionGroupTable["F"].Attributes["y"] = "z"
	again, _ = s.Group("F")
	require.Equal(t, fullGroup("F"), again)
}

// TestGroupReadsDuringWrites: event-loop style readers run while the
// writer commits (run with -race).
func TestGroupReadsDuringWrites(t *testing.T) {
	s, err := popstore.Open(popstore.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	defer s.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if g, ok := s.Group("G"); ok && g.RetryMaxTimes < 1 {
					t.Error("torn read")
				}
				_ = s.GroupTable()
				_ = s.GroupsDataVersion()
			}
		}()
	}
	for i := 1; i <= 50; i++ {
		g := fullGroup("G")
		g.RetryMaxTimes = int32(i)
		commit(t, s, func(tx *popstore.Txn) error { return tx.PutGroup(g) })
	}
	close(stop)
	wg.Wait()
	g, _ := s.Group("G")
	require.Equal(t, int32(50), g.RetryMaxTimes)
	require.Equal(t, int64(50), s.GroupsDataVersion().Counter)
}

// TestDeleteGroupOffsets removes the committed offsets of one group on
// every topic, including one set earlier in the same Txn, and leaves other
// groups' offsets alone.
func TestDeleteGroupOffsets(t *testing.T) {
	s, err := popstore.Open(popstore.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	w, err := batch.New(s, batch.Options{RetentionInterval: -1}, nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, w.Close()); require.NoError(t, s.Close()) }()
	require.NoError(t, w.SubmitWait(batch.LaneBackground, func(tx *popstore.Txn) error {
		for _, g := range []string{"G", "H"} {
			for _, topic := range []string{"T1", "T2"} {
				if err := tx.SetConsumerOffset(g, topic, 0, 5); err != nil {
					return err
				}
			}
		}
		return nil
	}))
	var n int
	require.NoError(t, w.SubmitWait(batch.LaneBackground, func(tx *popstore.Txn) error {
		if err := tx.SetConsumerOffset("G", "T3", 1, 7); err != nil {
			return err
		}
		n, err = tx.DeleteGroupOffsets("G")
		return err
	}))
	require.Equal(t, 3, n)
	for _, topic := range []string{"T1", "T2", "T3"} {
		_, ok := s.ConsumerOffset("G", topic, 0)
		require.False(t, ok, topic)
	}
	_, ok := s.ConsumerOffset("G", "T3", 1)
	require.False(t, ok)
	off, ok := s.ConsumerOffset("H", "T1", 0)
	require.True(t, ok)
	require.EqualValues(t, 5, off)
}
