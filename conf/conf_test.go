package conf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

// parse binds a fresh Default config, parses args and loads env.
func parse(t *testing.T, args []string, env map[string]string) (*Config, error) {
	t.Helper()
	c := Default()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	c.BindFlags(fs)
	require.NoError(t, fs.Parse(args))
	return c, c.Load(fs, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
}

func TestDefaultsAreValid(t *testing.T) {
	c, err := parse(t, nil, nil)
	require.NoError(t, err)
	require.Equal(t, ":10911", c.Listen)
	require.Equal(t, ":9876", c.NamesrvListen)
	require.Equal(t, ":5557", c.MetricsListen)
	require.Equal(t, ":8081", c.GRPCListen)
	require.Equal(t, 8, c.DefaultTopicQueueNums)
	require.Equal(t, 16777216, c.MaxFrameSize)
	require.Equal(t, 72*time.Hour, c.Retention)
	require.Equal(t, "group", c.PopWriteMode)
	require.NotEmpty(t, c.BrokerIP, "Load detects the broker IP")
	require.Nil(t, c.NamesrvAddrs())
}

func TestEnvOverridesDefaultButNotFlag(t *testing.T) {
	c, err := parse(t, []string{"--batch-max-ops=100"}, map[string]string{
		"POPSHIM_DATA_DIR":                       "/tmp/pd",
		"POPSHIM_BATCH_MAX_OPS":                  "7", // the flag wins
		"POPSHIM_AUTO_CREATE_TOPIC":              "false",
		"POPSHIM_AUTO_CREATE_SUBSCRIPTION_GROUP": "false",
		"POPSHIM_RETENTION":                      "1h",
		"POPSHIM_NAMESRV_ADDR":                   "10.0.0.1:9876;10.0.0.2:9876",
		"POPSHIM_BROKER_IP":                      "192.0.2.7",
		"POPSHIM_BACKGROUND_SHARE":               "0.5",
	})
	require.NoError(t, err)
	require.Equal(t, "/tmp/pd", c.DataDir)
	require.Equal(t, 100, c.BatchMaxOps)
	require.False(t, c.AutoCreateTopic)
	require.False(t, c.AutoCreateSubscriptionGroup)
	require.Equal(t, time.Hour, c.Retention)
	require.Equal(t, []string{"10.0.0.1:9876", "10.0.0.2:9876"}, c.NamesrvAddrs())
	require.Equal(t, "192.0.2.7:10911", c.BrokerAddr())
	require.Equal(t, 0.5, c.BackgroundShare)
}

func TestBadEnvValueNamesTheVariable(t *testing.T) {
	_, err := parse(t, nil, map[string]string{"POPSHIM_SYNC_WORKERS": "many"})
	require.ErrorContains(t, err, "POPSHIM_SYNC_WORKERS")
}

func TestValidationErrorsNameTheFlag(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--listen=nonsense"}, "--listen must be host:port"},
		{[]string{"--listen="}, "--listen must not be empty"},
		{[]string{"--namesrv-listen=:10911"}, "same port"},
		{[]string{"--namesrv-addr=a:1;bad"}, "--namesrv-addr must be host:port"},
		{[]string{"--log-level=loud"}, "--log-level"},
		{[]string{"--log-format=xml"}, "--log-format must be auto, json or console"},
		{[]string{"--pop-write-mode=async"}, "--pop-write-mode must be group or sync"},
		{[]string{"--batch-max-ops=0"}, "--batch-max-ops must be in [1,"},
		{[]string{"--background-share=0"}, "--background-share must be in (0, 1]"},
		{[]string{"--background-share=1.5"}, "--background-share"},
		{[]string{"--broker-name=a@b"}, "--broker-name"},
		{[]string{"--region-id=eu\x01west"}, "--region-id \"eu\\x01west\" must not contain control characters"},
		{[]string{"--cluster-name=c\x02"}, "--cluster-name \"c\\x02\" must not contain control characters"},
		{[]string{"--region-id="}, "--region-id must not be empty"},
		{[]string{"--broker-ip=not-an-ip"}, "--broker-ip must be an IP address"},
		{[]string{"--max-message-size=16777216"}, "--max-message-size 16777216 must be below --max-frame-size"},
		{[]string{"--retention=0s"}, "--retention must be ≥ 1m0s"},
		{[]string{"--idle-timeout=-1s"}, "--idle-timeout must be ≥ 0"},
		{[]string{"--default-topic-queue-nums=0"}, "--default-topic-queue-nums"},
		{[]string{"--data-dir="}, "--data-dir must not be empty"},
		{[]string{"--memory-limit=1"}, "--memory-limit must be 0 (auto), negative (none) or ≥ 16 MiB"},
		{[]string{"--memory-limit=16777215"}, "--memory-limit must be 0 (auto), negative (none) or ≥ 16 MiB"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, err := parse(t, tc.args, nil)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestHeartbeatLimitFlags(t *testing.T) {
	c, err := parse(t, nil, nil)
	require.NoError(t, err)
	require.Equal(t, 1000, c.MaxHeartbeatGroups)
	require.Equal(t, 1000, c.MaxHeartbeatSubscriptions)
	require.Equal(t, 10000, c.MaxConnClientChannels)

	c, err = parse(t, []string{"--max-heartbeat-groups=5"}, map[string]string{
		"POPSHIM_MAX_HEARTBEAT_GROUPS":        "7", // the flag wins
		"POPSHIM_MAX_HEARTBEAT_SUBSCRIPTIONS": "9",
		"POPSHIM_MAX_CONN_CLIENT_CHANNELS":    "11",
	})
	require.NoError(t, err)
	require.Equal(t, 5, c.MaxHeartbeatGroups)
	require.Equal(t, 9, c.MaxHeartbeatSubscriptions)
	require.Equal(t, 11, c.MaxConnClientChannels)

	for _, flag := range []string{"max-heartbeat-groups", "max-heartbeat-subscriptions", "max-conn-client-channels"} {
		_, err := parse(t, []string{"--" + flag + "=0"}, nil)
		require.ErrorContains(t, err, "--"+flag+" must be in [1,")
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	_, err := parse(t, []string{"--sync-workers=0", "--queue-capacity=0"}, nil)
	require.ErrorContains(t, err, "--sync-workers")
	require.ErrorContains(t, err, "--queue-capacity")
}

func TestEveryFlagHasEnvInUsageAndTestHookIsHidden(t *testing.T) {
	c := Default()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	c.BindFlags(fs)
	n := 0
	fs.VisitAll(func(f *pflag.Flag) {
		n++
		require.Contains(t, f.Usage, EnvName(f.Name), f.Name)
	})
	require.GreaterOrEqual(t, n, 30)
	require.Nil(t, fs.Lookup("test-slow-store"), "store delays are a test option of StartStack (WithWriteHook), not a flag")
	require.Equal(t, "POPSHIM_DATA_DIR", EnvName("data-dir"))
}

func TestConsoleLogHasNoColourWhenNotATerminal(t *testing.T) {
	cfg := Default()
	cfg.LogFormat = "console"
	var buf bytes.Buffer
	log := cfg.NewLogger(&buf)
	log.Warn().Msg("hello")
	if strings.Contains(buf.String(), "\x1b[") {
		t.Fatalf("console log written to a buffer carries ANSI codes: %q", buf.String())
	}
	if !strings.Contains(buf.String(), "hello") {
		t.Fatalf("message missing: %q", buf.String())
	}
}

func TestGCPercentFlag(t *testing.T) {
	c, err := parse(t, nil, nil)
	require.NoError(t, err)
	require.Equal(t, 400, c.GCPercent)
	c, err = parse(t, nil, map[string]string{"POPSHIM_GC_PERCENT": "0"})
	require.NoError(t, err)
	require.Equal(t, 0, c.GCPercent, "0 keeps the runtime's GOGC")
	_, err = parse(t, []string{"--gc-percent=-1"}, nil)
	require.ErrorContains(t, err, "--gc-percent must be in [0,")
}

// --max-reconsume-times 0 is refused: it used to be accepted and then
// silently behave as 16 (0 also means "unset" in stored group configs).
func TestMaxReconsumeTimesAtLeastOne(t *testing.T) {
	_, err := parse(t, []string{"--max-reconsume-times=0"}, nil)
	require.ErrorContains(t, err, "--max-reconsume-times must be in [1,")
	c, err := parse(t, []string{"--max-reconsume-times=1"}, nil)
	require.NoError(t, err)
	require.Equal(t, 1, c.MaxReconsumeTimes)
}

// --pprof is off by default and needs the metrics listener.
func TestPprofNeedsMetricsListen(t *testing.T) {
	c := Default()
	require.False(t, c.Pprof)
	c.Pprof = true
	c.MetricsListen = ""
	require.ErrorContains(t, c.Validate(), "--pprof needs --metrics-listen")
	c.MetricsListen = "127.0.0.1:0"
	require.NotContains(t, fmt.Sprint(c.Validate()), "--pprof")
}

// TestBrokerIPFollowsListenHost: without --broker-ip, a broker bound to one
// address advertises that address; a wildcard or host-name listen falls
// back to detection, and --broker-ip always wins.
func TestBrokerIPFollowsListenHost(t *testing.T) {
	c, err := parse(t, []string{"--listen=127.0.0.1:32911"}, nil)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1", c.BrokerIP)
	require.Equal(t, "127.0.0.1:32911", c.BrokerAddr())

	c, err = parse(t, []string{"--listen=127.0.0.1:32911", "--broker-ip=10.1.2.3"}, nil)
	require.NoError(t, err)
	require.Equal(t, "10.1.2.3", c.BrokerIP)

	c, err = parse(t, nil, map[string]string{"POPSHIM_LISTEN": "[::1]:10911"})
	require.NoError(t, err)
	require.Equal(t, "::1", c.BrokerIP)

	for _, listen := range []string{":10911", "0.0.0.0:10911", "[::]:10911", "localhost:10911"} {
		c, err = parse(t, []string{"--listen=" + listen}, nil)
		require.NoError(t, err)
		require.Equal(t, DetectBrokerIP(), c.BrokerIP, listen)
	}
	require.Equal(t, "", ListenBrokerIP("no-port"))
}

// --log-format defaults to auto: JSON into a pipe, file or buffer, the
// console format (coloured) on a terminal; json and console keep working
// whatever the writer.
func TestLogFormatAuto(t *testing.T) {
	c, err := parse(t, nil, nil)
	require.NoError(t, err)
	require.Equal(t, LogFormatAuto, c.LogFormat)
	for _, f := range []string{"auto", "json", "console"} {
		_, err := parse(t, []string{"--log-format=" + f}, nil)
		require.NoError(t, err, f)
	}

	logLine := func(format string, tty bool) string {
		t.Helper()
		prev := terminal
		terminal = func(io.Writer) bool { return tty }
		defer func() { terminal = prev }()
		cfg := Default()
		cfg.LogFormat = format
		var buf bytes.Buffer
		log := cfg.NewLogger(&buf)
		log.Info().Msg("hello")
		return buf.String()
	}
	isJSON := func(s string) bool { return json.Valid([]byte(strings.TrimSpace(s))) }

	require.True(t, isJSON(logLine("auto", false)), "auto writes JSON when not on a terminal")
	onTTY := logLine("auto", true)
	require.False(t, isJSON(onTTY), "auto writes the console format on a terminal: %q", onTTY)
	require.Contains(t, onTTY, "hello")
	require.Contains(t, onTTY, "\x1b[", "colour on a terminal")
	require.True(t, isJSON(logLine("json", true)), "json stays JSON on a terminal")
	console := logLine("console", false)
	require.False(t, isJSON(console))
	require.NotContains(t, console, "\x1b[", "no colour off a terminal")
}

// --grpc-listen defaults to the proxy's gRPC port, comes from
// POPSHIM_GRPC_LISTEN, is turned off by an empty value and may not share a
// port with another listener.
func TestGRPCListen(t *testing.T) {
	c, err := parse(t, nil, map[string]string{"POPSHIM_GRPC_LISTEN": "127.0.0.1:18081"})
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:18081", c.GRPCListen)
	c, err = parse(t, []string{"--grpc-listen="}, map[string]string{"POPSHIM_GRPC_LISTEN": "127.0.0.1:18081"})
	require.NoError(t, err)
	require.Empty(t, c.GRPCListen, "an empty flag turns the endpoint off and wins over the environment")
	c, err = parse(t, nil, map[string]string{"POPSHIM_GRPC_LISTEN": ""})
	require.NoError(t, err)
	require.Empty(t, c.GRPCListen)
	_, err = parse(t, []string{"--grpc-listen=:10911"}, nil)
	require.ErrorContains(t, err, "--grpc-listen \":10911\" shares a port")
	_, err = parse(t, []string{"--grpc-listen=nonsense"}, nil)
	require.ErrorContains(t, err, "grpc-listen")
}

// --read-max-bytes: 0 is half of --queue-max-bytes, negative is none
// (-1), a positive value is taken as is and must be at least 1 MiB.
func TestReadMaxBytesFlag(t *testing.T) {
	c, err := parse(t, []string{"--queue-max-bytes=67108864"}, nil)
	require.NoError(t, err)
	require.Zero(t, c.ReadMaxBytes)
	require.Equal(t, int64(32<<20), c.EffectiveReadMaxBytes())

	c, err = parse(t, nil, map[string]string{"POPSHIM_READ_MAX_BYTES": "50331648"})
	require.NoError(t, err)
	require.Equal(t, int64(48<<20), c.EffectiveReadMaxBytes())

	c, err = parse(t, []string{"--read-max-bytes=-5"}, nil)
	require.NoError(t, err)
	require.Equal(t, int64(-1), c.EffectiveReadMaxBytes())

	_, err = parse(t, []string{"--read-max-bytes=1000"}, nil)
	require.ErrorContains(t, err, "--read-max-bytes must be 0, negative, or in [1 MiB, 1 TiB]")
}

// --memory-limit: 0 is --queue-max-bytes + 64 MiB (the floor Serve's
// limiter starts from), negative is none (0), a positive value as is.
func TestMemoryLimitFlag(t *testing.T) {
	c, err := parse(t, []string{"--queue-max-bytes=67108864"}, nil)
	require.NoError(t, err)
	require.Equal(t, int64(128<<20), c.EffectiveMemoryLimit())
	require.Equal(t, int64(640<<20), c.MemoryLimitCeiling())
	c, err = parse(t, []string{"--memory-limit=-1"}, nil)
	require.NoError(t, err)
	require.Zero(t, c.EffectiveMemoryLimit())
	c, err = parse(t, nil, map[string]string{"POPSHIM_MEMORY_LIMIT": "1073741824"})
	require.NoError(t, err)
	require.Equal(t, int64(1<<30), c.EffectiveMemoryLimit())
	c, err = parse(t, []string{"--memory-limit=16777216"}, nil)
	require.NoError(t, err, "16 MiB is the least positive limit accepted")
	require.Equal(t, int64(16<<20), c.EffectiveMemoryLimit())
}

// The messages family's memtable gets what --queue-max-bytes leaves above
// 128 MiB, from 16 MiB up to popstore's default (unchanged at the default
// queue bound).
func TestMessagesMemtableFollowsQueueBound(t *testing.T) {
	for _, tc := range []struct{ queue, want int64 }{
		{0, 128 << 20}, // the default --queue-max-bytes, 256 MiB
		{64 << 20, 16 << 20},
		{144 << 20, 16 << 20},
		{192 << 20, 64 << 20},
		{1 << 30, 128 << 20},
	} {
		var args []string
		if tc.queue > 0 {
			args = []string{fmt.Sprintf("--queue-max-bytes=%d", tc.queue)}
		}
		c, err := parse(t, args, nil)
		require.NoError(t, err)
		require.Equal(t, tc.want, c.MessagesMemtableBytes(), "--queue-max-bytes %d", c.QueueMaxBytes)
	}
}

// --message-delay-level is parsed by Validate (a bad value stops Load,
// before serve touches the data directory), not first by the broker.
func TestMessageDelayLevelValidated(t *testing.T) {
	c, err := parse(t, nil, nil)
	require.NoError(t, err)
	l, err := c.DelayLevelMillis()
	require.NoError(t, err)
	require.Len(t, l, 18)
	require.EqualValues(t, 1000, l[0])
	require.EqualValues(t, 7200_000, l[17])
	c, err = parse(t, []string{"--message-delay-level=2s 1d"}, nil)
	require.NoError(t, err)
	l, _ = c.DelayLevelMillis()
	require.Equal(t, []int64{2000, 86_400_000}, l)
	for _, bad := range []string{"1s 5x", " ", "1s -2m", "s"} {
		_, err = parse(t, []string{"--message-delay-level=" + bad}, nil)
		require.ErrorContains(t, err, "--message-delay-level", "%q", bad)
	}
	_, err = parse(t, nil, map[string]string{"POPSHIM_MESSAGE_DELAY_LEVEL": "1s 5x"})
	require.ErrorContains(t, err, `--message-delay-level "1s 5x": bad delay level "5x"`)
}
