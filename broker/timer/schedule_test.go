package timer

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
)

func TestResolve(t *testing.T) {
	l, err := conf.Default().DelayLevelMillis()
	require.NoError(t, err)
	s := &Settings{LevelMillis: l, MaxDelayMillis: 3 * 24 * 3600 * 1000}
	const now = 1_000_000
	props := func(kv ...string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		p, _ := codec.EncodeProperties(m)
		return p
	}
	sch, err := s.Resolve(props(codec.PropertyDelayTimeLevel, "99", codec.PropertyTimerDelaySec, "5"), "T", 2, now)
	require.NoError(t, err)
	require.EqualValues(t, now+7200_000, sch.DueMillis, "level above N is N; the timer properties are dropped")
	v, _ := codec.PropertyValue(sch.Props, codec.PropertyDelayTimeLevel)
	require.Equal(t, "18", v)
	_, ok := codec.PropertyValue(sch.Props, codec.PropertyTimerDelaySec)
	require.False(t, ok)
	v, _ = codec.PropertyValue(sch.Props, codec.PropertyRealQueueID)
	require.Equal(t, "2", v)

	for _, lvl := range []string{"0", "-1", "x"} {
		sch, err = s.Resolve(props(codec.PropertyDelayTimeLevel, lvl), "T", 0, now)
		require.NoError(t, err)
		require.Zero(t, sch.DueMillis, "level %s", lvl)
	}
	sch, err = s.Resolve(props(codec.PropertyTimerDelayMS, "1500"), "T", 0, now)
	require.NoError(t, err)
	require.EqualValues(t, now+1500, sch.DueMillis)
	v, _ = codec.PropertyValue(sch.Props, codec.PropertyTimerOutMS)
	require.Equal(t, "1001500", v)

	sch, err = s.Resolve(props(codec.PropertyTimerDeliverMS, "5"), "T", 0, now)
	require.NoError(t, err)
	require.Zero(t, sch.DueMillis, "past: at once")
	_, err = s.Resolve(props(codec.PropertyTimerDelaySec, "259201"), "T", 0, now)
	require.ErrorIs(t, err, ErrIllegal)
	sch, err = s.Resolve(props(codec.PropertyTimerDelaySec, "259200"), "T", 0, now)
	require.NoError(t, err)
	require.EqualValues(t, now+259200_000, sch.DueMillis, "exactly the max delay is allowed")
	_, err = s.Resolve(props(codec.PropertyTimerDeliverMS, "soon"), "T", 0, now)
	require.ErrorIs(t, err, ErrIllegal)
	sch, err = s.Resolve(props(codec.PropertyTimerDelayMS, "1500", codec.PropertyTimerOutMS, "1"), "T", 0, now)
	require.NoError(t, err)
	require.Zero(t, sch.DueMillis, "TIMER_OUT_MS already set: not timed again (Java's double check)")
}

// TestResolveDeleteMarker: TIMER_DEL_UNIQKEY on a future timer message
// makes it a deletion marker of that key; now or past, or beyond the max
// delay, it is illegal; with a delay level it means nothing.
func TestResolveDeleteMarker(t *testing.T) {
	s := &Settings{LevelMillis: []int64{1000}, MaxDelayMillis: 10_000}
	const now = 1_000_000
	p := func(kv ...string) string {
		out := ""
		for i := 0; i+1 < len(kv); i += 2 {
			out, _ = codec.SetProperty(out, kv[i], kv[i+1])
		}
		return out
	}
	sch, err := s.Resolve(p(codec.PropertyTimerDeliverMS, "1005000", codec.PropertyTimerDelUniqKey, "T+U"), "T", 0, now)
	require.NoError(t, err)
	require.Equal(t, "T+U", sch.DeleteKey)
	require.EqualValues(t, 1005000, sch.DueMillis)
	for _, due := range []string{"1000000", "999999", "1010001"} {
		_, err = s.Resolve(p(codec.PropertyTimerDeliverMS, due, codec.PropertyTimerDelUniqKey, "T+U"), "T", 0, now)
		require.ErrorIs(t, err, ErrIllegal, due)
	}
	sch, err = s.Resolve(p(codec.PropertyDelayTimeLevel, "1", codec.PropertyTimerDelUniqKey, "T+U"), "T", 0, now)
	require.NoError(t, err)
	require.Empty(t, sch.DeleteKey, "a delay level is no timer message")
	sch, err = s.Resolve(p(codec.PropertyTimerDelUniqKey, "T+U"), "T", 0, now)
	require.NoError(t, err)
	require.Zero(t, sch.DueMillis, "no timer property: an ordinary message, as in Java")
}

// TestSlotOf: Java's 1 s slot (HookUtils.transformTimerMessage's
// flooring): a whole second belongs to the second before.
func TestSlotOf(t *testing.T) {
	for in, want := range map[int64]int64{5000: 4000, 5001: 5000, 5999: 5000, 6000: 5000, 6001: 6000} {
		require.Equal(t, want, SlotOf(in), "SlotOf(%d)", in)
	}
	require.Equal(t, "T+U", DeleteKeyOf("T", "U"))
}

// The pre-check never hides a property Resolve reads, wherever it sits
// among others, and lets ordinary properties (also ones whose values
// merely contain the names) skip the lookups. A longer key ending in DELAY
// takes the full path, with the same result.
func TestMayHaveSchedule(t *testing.T) {
	keys := []string{codec.PropertyDelayTimeLevel, codec.PropertyTimerOutMS, codec.PropertyTimerDelaySec,
		codec.PropertyTimerDelayMS, codec.PropertyTimerDeliverMS, codec.PropertyTimerDelUniqKey}
	for _, k := range keys {
		for _, others := range []map[string]string{nil, {"TAGS": "a", "KEYS": "k1 k2", "UNIQ_KEY": "ABC"}} {
			m := map[string]string{k: "3"}
			for ok, ov := range others {
				m[ok] = ov
			}
			props, err := codec.EncodeProperties(m)
			if err != nil {
				t.Fatal(err)
			}
			if !mayHaveSchedule(props) {
				t.Errorf("%q not seen in %q", k, props)
			}
		}
	}
	plain, err := codec.EncodeProperties(map[string]string{"TAGS": "DELAY", "KEYS": "TIMER", "UNIQ_KEY": "ABC", "WAIT": "true"})
	if err != nil {
		t.Fatal(err)
	}
	if mayHaveSchedule(plain) {
		t.Errorf("ordinary properties %q took the slow path", plain)
	}
	suffix, err := codec.EncodeProperties(map[string]string{"NODELAY": "1"})
	if err != nil {
		t.Fatal(err)
	}
	s := &Settings{LevelMillis: []int64{1000}, MaxDelayMillis: 3600_000}
	for _, p := range []string{plain, suffix} {
		sch, err := s.Resolve(p, "T", 0, 1000)
		if err != nil || sch.Props != p || sch.DueMillis != 0 {
			t.Errorf("Resolve of %q: %+v, %v", p, sch, err)
		}
	}
}
