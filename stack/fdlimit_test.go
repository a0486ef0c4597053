package stack

import (
	"bytes"
	"math"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/popshim/popshim/conf"
)

// The arithmetic of fitting --max-conns to RLIMIT_NOFILE.
func TestFitConnLimit(t *testing.T) {
	for _, tc := range []struct {
		name                       string
		nofile                     uint64
		asked, listeners, perConn  int
		wantReserve, wantEffective int
		wantClamped                bool
	}{
		// This machine's limit with the defaults: 2 × 10,000 + 2,500 > 20,000.
		{"defaults at 20000", 20000, 10000, 2, 1, 2500, 8750, true},
		{"one listener fits", 20000, 10000, 1, 1, 2500, 10000, false},
		{"exactly fits", 11428, 10000, 1, 1, 1428, 10000, false},
		{"one over", 11427, 10000, 1, 1, 1428, 9999, true},
		{"TLS holds three each", 20000, 10000, 2, 3, 2500, 2916, true},
		{"small limit keeps the minimum reserve", 256, 10000, 2, 1, 64, 96, true},
		{"tiny limit still allows one", 64, 10000, 2, 1, 64, 1, true},
		{"a million: no clamp", 1 << 20, 10000, 2, 1, 131072, 10000, false},
		{"bound disabled stays disabled", 256, -1, 2, 1, 0, -1, false},
		{"unknown limit: no clamp", 0, 10000, 2, 1, 0, 10000, false},
		{"beyond int: no clamp", math.MaxUint64, 10000, 2, 1, 0, 10000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := fitConnLimit(tc.nofile, tc.asked, tc.listeners, tc.perConn)
			require.Equal(t, tc.wantReserve, l.reserve, "reserve")
			require.Equal(t, tc.wantEffective, l.effective, "effective")
			require.Equal(t, tc.wantClamped, l.clamped())
			if l.clamped() {
				require.LessOrEqual(t, l.listeners*l.perConn*l.effective+l.reserve, max(int(tc.nofile), l.listeners*l.perConn+l.reserve),
					"the listeners' share and the reserve fit the limit")
			}
		})
	}
}

// brokerConnLimit reads this process's limit and warns once, with
// the numbers, only when it lowers the bound.
func TestBrokerConnLimitWarns(t *testing.T) {
	var rl unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &rl))
	if rl.Cur == unix.RLIM_INFINITY || rl.Cur > 1<<24 {
		t.Skipf("soft RLIMIT_NOFILE %d: no bound to exceed", rl.Cur)
	}
	cfg := conf.Default()
	var buf bytes.Buffer
	log := zerolog.New(&buf)

	asked := int(rl.Cur) // one listener of this many connections cannot fit with a reserve
	got := brokerConnLimit(cfg, asked, true, true, log)
	want := fitConnLimit(rl.Cur, asked, 3, 1).effective // broker, name server, gRPC
	require.Equal(t, want, got)
	require.Less(t, got, asked)
	require.Equal(t, 1, bytes.Count(buf.Bytes(), []byte("--max-conns lowered")), buf.String())
	require.Contains(t, buf.String(), `"effective_max_conns":`)
	require.Contains(t, buf.String(), `"rlimit_nofile":`)

	buf.Reset()
	require.Equal(t, 5, brokerConnLimit(cfg, 5, true, true, log), "a bound that fits is kept")
	require.Equal(t, -1, brokerConnLimit(cfg, -1, true, true, log), "no bound stays none")
	require.Empty(t, buf.String(), "and neither warns")
}
