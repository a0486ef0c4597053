package stack

import (
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/remoting"
)

// parseConfig parses args and env as the popshim command line does.
func parseConfig(t *testing.T, args []string, env map[string]string) (*conf.Config, error) {
	t.Helper()
	c := conf.Default()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	c.BindFlags(fs)
	require.NoError(t, fs.Parse(args))
	return c, c.Load(fs, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
}

// The defaults conf documents as the listeners' are remoting's.
func TestDefaultsMatchRemoting(t *testing.T) {
	require.Equal(t, remoting.DefaultMaxConns, conf.DefaultMaxConns)
	require.Equal(t, remoting.DefaultTLSHandshakeTimeout, conf.DefaultTLSHandshakeTimeout)
	require.Equal(t, int64(remoting.DefaultMaxReadBytes), conf.Default().EffectiveReadMaxBytes())
	c := conf.Default()
	for _, mode := range []string{"disabled", "permissive", "enforcing"} {
		c.TLS.Mode = mode
		require.Equal(t, mode, BrokerServerOptions(c, nil).TLSMode.String(), "the listener gets the configured --tls-mode")
	}
}

func TestServerOptionsFromConfig(t *testing.T) {
	c, err := parseConfig(t, []string{"--idle-timeout=0", "--max-frame-size=2048", "--max-message-size=1024"}, nil)
	require.NoError(t, err)
	o := BrokerServerOptions(c, nil)
	require.Equal(t, ":10911", o.Addr)
	require.Equal(t, 2048, o.MaxFrameBytes)
	require.Negative(t, o.IdleTimeout, "conf 0 disables; remoting spells that negative")
	require.Equal(t, "namesrv", NamesrvServerOptions(c, nil).Name)
}

// --max-conns reaches both listeners; 0 disables (negative in remoting);
// negative values are refused.
func TestMaxConnsFlag(t *testing.T) {
	c, err := parseConfig(t, nil, nil)
	require.NoError(t, err)
	require.Equal(t, 10000, c.MaxConns)
	require.Equal(t, 10000, BrokerServerOptions(c, nil).MaxConns)
	require.Equal(t, 10000, NamesrvServerOptions(c, nil).MaxConns)

	c, err = parseConfig(t, []string{"--max-conns=7"}, map[string]string{"POPSHIM_MAX_CONNS": "9"})
	require.NoError(t, err)
	require.Equal(t, 7, BrokerServerOptions(c, nil).MaxConns, "the flag wins over the env var")
	require.Equal(t, 7, NamesrvServerOptions(c, nil).MaxConns)

	c, err = parseConfig(t, nil, map[string]string{"POPSHIM_MAX_CONNS": "0"})
	require.NoError(t, err)
	require.Negative(t, BrokerServerOptions(c, nil).MaxConns, "conf 0 disables; remoting spells that negative")
	require.Negative(t, NamesrvServerOptions(c, nil).MaxConns)

	_, err = parseConfig(t, []string{"--max-conns=-1"}, nil)
	require.ErrorContains(t, err, "--max-conns must be in [0,")
	_, err = parseConfig(t, []string{"--max-conns=16777217"}, nil)
	require.ErrorContains(t, err, "--max-conns must be in [0,")
}

// --read-max-bytes reaches both listeners: 0 is half of --queue-max-bytes,
// negative disables (-1 in remoting).
func TestReadMaxBytesReachesListeners(t *testing.T) {
	c, err := parseConfig(t, []string{"--queue-max-bytes=67108864"}, nil)
	require.NoError(t, err)
	require.Equal(t, int64(32<<20), BrokerServerOptions(c, nil).MaxReadBytes)
	require.Equal(t, int64(32<<20), NamesrvServerOptions(c, nil).MaxReadBytes)
	c, err = parseConfig(t, nil, map[string]string{"POPSHIM_READ_MAX_BYTES": "-1"})
	require.NoError(t, err)
	require.Negative(t, BrokerServerOptions(c, nil).MaxReadBytes)
}

// The store opened by Serve gets the messages memtable --queue-max-bytes
// sizes, and a retention ≤ 0 (set by tests) is none.
func TestStoreOptionsFromConfig(t *testing.T) {
	c, err := parseConfig(t, []string{"--queue-max-bytes=67108864"}, nil)
	require.NoError(t, err)
	c.Retention = 0 // tests' configs; the flag wants ≥ 1m
	o := StoreOptions(c, nil)
	require.Equal(t, int64(16<<20), o.MessagesMemtableBytes)
	require.Equal(t, int64(-1), o.RetentionMillis)
	require.Equal(t, c.DataDir, o.Dir)
	c, err = parseConfig(t, nil, nil)
	require.NoError(t, err)
	require.Equal(t, int64(popstore.DefaultMessagesMemtableBytes), StoreOptions(c, nil).MessagesMemtableBytes)
	require.Equal(t, c.Retention.Milliseconds(), StoreOptions(c, nil).RetentionMillis)
}
