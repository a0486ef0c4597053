package longpoll

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/broker/filter"
)

// sqlFilter compiles sel into a Filter.
func sqlFilter(t *testing.T, sel string) *Filter {
	t.Helper()
	e, err := filter.Cached(sel)
	require.NoError(t, err)
	return SQLFilter(e)
}

// An SQL92 filter matches by the message's properties (TAGS included),
// and a pending message read without its properties matches no SQL92
// filter but still its tag filters.
func TestLP_SQLFilterMatch(t *testing.T) {
	f := sqlFilter(t, "n > 5 AND TAGS = 'B'")
	require.True(t, f.IsSQL())
	require.True(t, f.MatchProps("n\x016\x02TAGS\x01B\x02"))
	require.False(t, f.MatchProps("n\x015\x02TAGS\x01B\x02"))
	require.False(t, f.MatchProps(tagProps("B")), "n absent: NULL, no match")
	require.True(t, f.matchesPending(PendingTag{Tag: "B", HasTag: true, Props: "n\x017\x02TAGS\x01B\x02", HasProps: true}))
	require.False(t, f.matchesPending(PendingTag{Tag: "B", HasTag: true}), "properties not read")

	tf, err := ParseTagFilter("TAG", "B")
	require.NoError(t, err)
	require.False(t, tf.IsSQL())
	require.True(t, tf.matchesPending(PendingTag{Tag: "B", HasTag: true}))
	require.False(t, (*Filter)(nil).IsSQL())
	require.True(t, (*Filter)(nil).MatchProps("anything"))

	_, err = ParseTagFilter("sql92", "a = 1")
	require.ErrorIs(t, err, ErrSQL92)
	require.True(t, IsSQL92("Sql92"))
}

// What outstanding POPs of a group want combines TAG and SQL92 filters:
// a peer's scan leaves a message to them when any selector or tag takes
// it; equal selectors are kept once.
func TestLP_PeerWantsSQL(t *testing.T) {
	r := NewRegistry(1<<20, func() int64 { return 0 }, nil)
	keys := []Key{{"T", 0}}
	red := &Poll{Keys: keys, Group: "G", Filter: sqlFilter(t, "color = 'red'")}
	red2 := &Poll{Keys: keys, Group: "G", Filter: sqlFilter(t, "color = 'red'")}
	tb, err := ParseTagFilter("TAG", "B")
	require.NoError(t, err)
	tagB := &Poll{Keys: []Key{{"T", AnyQueue}}, Group: "G", Filter: tb}
	r.AddTaker(red)
	r.AddTaker(red2)
	w := r.WantsOf("G", "T", 0)
	require.Len(t, w.sqls, 1, "one selector, shared through filter.Cached")
	require.True(t, w.WantsProps("color\x01red\x02"))
	require.False(t, w.WantsProps("color\x01blue\x02"))
	require.False(t, w.WantsProps(tagProps("B")))
	r.AddTaker(tagB)
	w = r.WantsOf("G", "T", 0)
	require.True(t, w.WantsProps(tagProps("B")), "the any-queue TAG peer counts too")
	require.True(t, w.WantsProps("color\x01red\x02"))
	require.Nil(t, r.WantsOf("H", "T", 0))
	r.RemoveTaker(red)
	r.RemoveTaker(red2)
	r.RemoveTaker(tagB)
	require.Nil(t, r.WantsOf("G", "T", 0))
}

// A wake-up of a group with an SQL92 waiter asks its probe for the
// properties; merged wake-ups keep asking.
func TestLP_SQLWakeAsksForProperties(t *testing.T) {
	r := NewRegistry(1<<20, func() int64 { return 0 }, nil)
	src := &propsSource{}
	keys := []Key{{"T", 0}}
	var woken bool
	p := &Poll{Keys: keys, Group: "G", Filter: sqlFilter(t, "k = 'v'"), Src: src, DeadlineMillis: 60000,
		OnWake: func() { woken = true }, OnExpire: func() { t.Error("expired") }}
	require.Equal(t, Parked, r.Park(p, r.Snapshot(keys)))
	src.pending = []PendingTag{{QueueID: 0, Props: "k\x01w\x02", HasProps: true}}
	r.Appended("T", 0, 1)
	require.Equal(t, []bool{true}, src.asked)
	require.False(t, woken, "k = 'w' does not match")
	src.pending = []PendingTag{{QueueID: 0, Props: "k\x01v\x02", HasProps: true}}
	r.Appended("T", 0, 2)
	require.True(t, woken)

	w := wakeReq{from: 1, to: 2}
	w.merge(wakeReq{from: 2, to: 3, props: true})
	require.True(t, w.props)
}

// propsSource runs probes inline and records whether they asked for
// properties.
type propsSource struct {
	pending []PendingTag
	asked   []bool
}

func (s *propsSource) PendingTags(_, _ string, _ int32, _, _ int64, _ int, withProps bool) ([]PendingTag, bool) {
	s.asked = append(s.asked, withProps)
	return s.pending, false
}

func (s *propsSource) SubmitProbe(job func()) bool {
	job()
	return true
}
