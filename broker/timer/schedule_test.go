package timer

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

func TestParseDelayLevels(t *testing.T) {
	l, err := ParseDelayLevels(DefaultDelayLevels)
	require.NoError(t, err)
	require.Len(t, l, 18)
	require.EqualValues(t, 1000, l[0])
	require.EqualValues(t, 7200_000, l[17])
	_, err = ParseDelayLevels("1s 5x")
	require.Error(t, err)
	_, err = ParseDelayLevels(" ")
	require.Error(t, err)
}

func TestResolve(t *testing.T) {
	l, _ := ParseDelayLevels(DefaultDelayLevels)
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
