package handler_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/remoting/logtest"
	"github.com/popshim/popshim/stack"
)

// servingLine returns the fields of the "popshim serving" log line, or nil.
func servingLine(log string) map[string]any {
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, `"popshim serving"`) {
			continue
		}
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			return m
		}
	}
	return nil
}

func TestServeStartsAndStopsCleanly(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := d2Config(t.TempDir())
	fields, logs, stop := serving(t, cfg)
	limit := debug.SetMemoryLimit(-1)
	require.GreaterOrEqual(t, limit, cfg.EffectiveMemoryLimit(), "Serve applied the default soft memory limit")
	require.LessOrEqual(t, limit, cfg.MemoryLimitCeiling(), "raised at most to the ceiling (stack/memlimit.go)")
	brokerAddr, _ := fields["listen"].(string)
	nsAddr, _ := fields["namesrv"].(string)
	metricsAddr, _ := fields["metrics"].(string)
	require.NotEmpty(t, brokerAddr)
	require.NotEmpty(t, nsAddr)
	require.NotEmpty(t, metricsAddr)
	assert.Equal(t, brokerAddr, fields["advertised"], "advertised address carries the bound port")

	// Both ports and /metrics answer.
	c, err := client.Dial(nsAddr)
	require.NoError(t, err)
	resp := d2Call(t, c, codec.RequestGetRouteInfoByTopic, map[string]string{"topic": "ClusterD2"}, nil)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	require.Contains(t, string(resp.Body), brokerAddr)
	require.NoError(t, c.Close())
	bc, err := client.Dial(brokerAddr)
	require.NoError(t, err)
	resp = d2Call(t, bc, codec.RequestGetBrokerRuntimeInfo, nil, nil)
	require.Equal(t, codec.Success, resp.Code)
	require.NoError(t, bc.Close())

	// A reply can reach the client before its rocketmq_rpc_latency
	// observation is recorded (a direct reply is sent inside Reply, the
	// observation follows it), so the scrape waits for it.
	var status int
	var text string
	require.Eventually(t, func() bool {
		status, text = httpGet(t, "http://"+metricsAddr+"/metrics")
		return strings.Contains(text, `request_code="get_routeinfo_by_topic"`)
	}, 10*time.Second, 10*time.Millisecond, "the GET_ROUTEINFO_BY_TOPIC answered above is observed")
	assert.Equal(t, http.StatusOK, status)
	assert.Contains(t, text, "rocketmq_rpc_latency")
	assert.Contains(t, text, `node_id="broker-d2"`)
	assert.Contains(t, text, `rocketmq_topic_number{cluster="ClusterD2",node_id="broker-d2",node_type="broker"}`)
	status, _ = httpGet(t, "http://"+metricsAddr+"/debug/pprof/cmdline")
	assert.Equal(t, http.StatusNotFound, status, "profiles are opt-in (--pprof)")

	stop()
	assert.Contains(t, logs.String(), "popshim stopped")
}

func TestServeStartupErrorUndoesEverything(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	st := d2Start(t, d2Config(t.TempDir()))
	// A second stack on the same broker port cannot start; it must release
	// its store and writer again (no goroutine left, the directory reusable).
	dir := t.TempDir()
	cfg := d2Config(dir)
	cfg.Listen = st.BrokerAddr()
	_, err := stack.StartStack(cfg, zerolog.Nop())
	require.Error(t, err)
	cfg = d2Config(dir)
	st2, err := stack.StartStack(cfg, zerolog.Nop())
	require.NoError(t, err, "the store of the failed start was not closed")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, st2.Close(ctx))
	require.NoError(t, st.Close(ctx))
}

func TestBrokerRuntimeInfoAndUnknownCode(t *testing.T) {
	cfg := d2Config(t.TempDir())
	cfg.NamesrvListen = ""
	st := d2Start(t, cfg)
	assert.Empty(t, st.NamesrvAddr(), "no name-server port; the broker port still serves 105/106 (below)")
	bc := dialAddr(t, st.BrokerAddr())
	d2Call(t, bc, codec.RequestHeartBeat, nil, heartbeatBody("cR", "GR"))

	resp := d2Call(t, bc, codec.RequestGetBrokerRuntimeInfo, nil, nil)
	require.Equal(t, codec.Success, resp.Code)
	kv, err := codec.DecodeKVTable(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, "479", kv.Table["brokerVersion"])
	assert.Equal(t, "V5_3_3", kv.Table["brokerVersionDesc"])
	assert.Equal(t, "group", kv.Table["popshimWriterMode"])
	assert.Equal(t, "1", kv.Table["consumerGroupNum"])
	assert.Equal(t, "1", kv.Table["consumerChannels"])
	assert.Contains(t, kv.Table["commitLogDirCapacity"], "Total : ")

	resp = d2Call(t, bc, 54321, map[string]string{"x": "y"}, nil)
	assert.Equal(t, codec.RequestCodeNotSupported, resp.Code)
	resp = d2Call(t, bc, codec.RequestGetRouteInfoByTopic, map[string]string{"topic": "%RETRY%GR"}, nil)
	assert.Equal(t, codec.Success, resp.Code, "the heartbeat of GR made its retry topic")
}

// serving runs stack.Serve(cfg) on its own goroutine and waits for its "popshim
// serving" line, whose fields it returns with the log buffer. stop cancels
// Serve and requires it to return nil within waitFor.
func serving(t *testing.T, cfg *conf.Config) (fields map[string]any, logs *logtest.Buffer, stop func()) {
	t.Helper()
	logs = &logtest.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- stack.Serve(ctx, cfg, zerolog.New(logs)) }()
	eventually(t, func() bool { fields = servingLine(logs.String()); return fields != nil }, "Serve did not log its addresses")
	stop = func() {
		t.Helper()
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(waitFor):
			t.Fatal("Serve did not return after cancel")
		}
	}
	return fields, logs, stop
}

// httpGet returns the status and body of GET url (no keep-alive).
func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	hr, err := hc.Get(url)
	require.NoError(t, err)
	defer hr.Body.Close()
	b, err := io.ReadAll(hr.Body)
	require.NoError(t, err)
	return hr.StatusCode, string(b)
}

// With --pprof the metrics listener also serves Go's runtime profiles.
func TestServePprofOptIn(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := d2Config(t.TempDir())
	cfg.Pprof = true
	cfg.ShutdownTimeout = 5 * time.Second
	fields, _, stop := serving(t, cfg)
	metricsAddr, _ := fields["metrics"].(string)
	require.NotEmpty(t, metricsAddr)

	status, body := httpGet(t, "http://"+metricsAddr+"/debug/pprof/cmdline")
	assert.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, os.Args[0], "cmdline is this process's command line")
	status, body = httpGet(t, "http://"+metricsAddr+"/debug/pprof/heap?debug=1")
	assert.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, "heap profile")
	status, _ = httpGet(t, "http://"+metricsAddr+"/metrics")
	assert.Equal(t, http.StatusOK, status, "/metrics still served")
	assert.Equal(t, true, fields["pprof"], "the serving line says profiles are on")

	// A CPU profile in flight must not hold the shutdown for its ?seconds=
	// (which would run past ShutdownTimeout and make Serve fail).
	profiled := make(chan error, 1)
	go func() {
		hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		hr, err := hc.Get("http://" + metricsAddr + "/debug/pprof/profile?seconds=60")
		if err == nil {
			_, _ = io.Copy(io.Discard, hr.Body)
			err = hr.Body.Close()
		}
		profiled <- err
	}()
	eventually(t, func() bool {
		_, stacks := httpGet(t, "http://"+metricsAddr+"/debug/pprof/goroutine?debug=1")
		return strings.Contains(stacks, "pprof.Profile")
	}, "the CPU profile request never started")

	stop()
	select {
	case err := <-profiled: // ended (answered or cut off) with the server
		_ = err // a cut-off profile is an error too; either ending is fine
	case <-time.After(waitFor):
		t.Fatal("the CPU profile request outlived the server")
	}
}

// The "popshim serving" line shows the retention, the disk ratios and the
// auto-create settings as the broker applies them: from the flags at the
// first start, and at the next start an autoCreateTopicEnable stored by
// UPDATE_BROKER_CONFIG, which wins over the flag.
func TestServeLogsEffectiveSettings(t *testing.T) {
	dir := t.TempDir()
	config := func() *conf.Config {
		cfg := d2Config(dir)
		cfg.Retention, cfg.RetentionInterval = 5*time.Hour, 90*time.Second
		cfg.DiskSpaceWarningLevelRatio, cfg.DiskSpaceCleanForciblyRatio = 0.8, 0.7
		cfg.AutoCreateTopic, cfg.AutoCreateSubscriptionGroup = true, false
		cfg.DefaultTopicQueueNums = 3
		return cfg
	}
	fields, _, stop := serving(t, config())
	want := map[string]any{
		"retention": "5h0m0s", "retentionInterval": "1m30s",
		"diskSpaceWarningLevelRatio": 0.8, "diskSpaceCleanForciblyRatio": 0.7,
		"autoCreateTopicEnable": true, "autoCreateSubscriptionGroup": false, "defaultTopicQueueNums": 3.0,
	}
	for k, v := range want {
		assert.Equal(t, v, fields[k], "field %s of %v", k, fields)
	}
	c, err := client.Dial(fields["listen"].(string))
	require.NoError(t, err)
	resp := d2Call(t, c, codec.RequestUpdateBrokerConfig, nil, []byte("autoCreateTopicEnable=false\n"))
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	require.NoError(t, c.Close())
	stop()

	fields, _, stop = serving(t, config())
	defer stop()
	assert.Equal(t, false, fields["autoCreateTopicEnable"], "the stored value, not the flag")
	assert.Equal(t, "5h0m0s", fields["retention"])
}
