package deploy

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/stack"
	"github.com/popshim/popshim/stack/stacktest"
	"github.com/popshim/popshim/tools"
)

const dashboardPath = "grafana/popshim-dashboard.json"

// dashboard is the part of a Grafana dashboard the test reads.
type dashboard struct {
	UID    string `json:"uid"`
	Panels []struct {
		ID      int    `json:"id"`
		Type    string `json:"type"`
		Title   string `json:"title"`
		GridPos struct {
			X, Y, W, H int
		} `json:"gridPos"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			Definition string `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile(dashboardPath)
	require.NoError(t, err)
	var d dashboard
	require.NoError(t, json.Unmarshal(b, &d))
	return d
}

var (
	promString   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	promMatchers = regexp.MustCompile(`\{[^}]*\}`)
	promRange    = regexp.MustCompile(`\[[^\]]*\]`)
	promGrouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promOffset   = regexp.MustCompile(`\boffset\s+-?[0-9a-z]+`)
	promNumber   = regexp.MustCompile(`\b\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\b`)
	promIdent    = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	labelValues  = regexp.MustCompile(`label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,`)
	promKeywords = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true}
)

// metricNames returns the metric names a PromQL expression selects: every
// identifier that is not a function call, a keyword, or inside label
// matchers, a range, an offset, a string or a grouping clause.
func metricNames(expr string) []string {
	s := promString.ReplaceAllString(expr, `""`)
	s = promMatchers.ReplaceAllString(s, " ")
	s = promRange.ReplaceAllString(s, " ")
	s = promGrouping.ReplaceAllString(s, " ")
	s = promOffset.ReplaceAllString(s, " ")
	s = promNumber.ReplaceAllString(s, " ")
	var out []string
	for _, loc := range promIdent.FindAllStringIndex(s, -1) {
		name := s[loc[0]:loc[1]]
		rest := strings.TrimLeft(s[loc[1]:], " \t\n")
		if strings.HasPrefix(rest, "(") || promKeywords[name] {
			continue
		}
		out = append(out, name)
	}
	return out
}

func TestMetricNames(t *testing.T) {
	cases := map[string][]string{
		`histogram_quantile(0.99, sum by (le, request_code) (rate(rocketmq_rpc_latency_bucket{instance=~"$instance",request_code=~"ack_message|x"}[$__rate_interval])))`: {"rocketmq_rpc_latency_bucket"},
		`sum(rate(a_sum{x="1"}[5m])) / sum(rate(a_count[5m])) * 1e3`: {"a_sum", "a_count"},
		`max(up) or vector(0) and on (job) b_total offset 5m`:        {"up", "b_total"},
	}
	for expr, want := range cases {
		require.Equal(t, want, metricNames(expr), expr)
	}
}

// dashboardMetrics returns every metric name the dashboard's panel queries
// and query variables use, sorted, without duplicates.
func dashboardMetrics(t *testing.T, d dashboard) []string {
	t.Helper()
	seen := map[string]bool{}
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			require.NotEmpty(t, tg.Expr, "panel %q has an empty query", p.Title)
			for _, n := range metricNames(tg.Expr) {
				seen[n] = true
			}
		}
	}
	for _, v := range d.Templating.List {
		for _, m := range labelValues.FindAllStringSubmatch(v.Definition, -1) {
			seen[m[1]] = true
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// TestDashboardLayout: the JSON parses, panel ids are unique and every
// panel fits the 24-column grid; the subjects the dashboard is for are on
// it.
func TestDashboardLayout(t *testing.T) {
	d := loadDashboard(t)
	require.Equal(t, "popshim-broker", d.UID)
	ids := map[int]bool{}
	for _, p := range d.Panels {
		require.False(t, ids[p.ID], "duplicate panel id %d", p.ID)
		ids[p.ID] = true
		require.LessOrEqual(t, p.GridPos.X+p.GridPos.W, 24, p.Title)
		if p.Type != "row" {
			require.NotEmpty(t, p.Targets, p.Title)
		}
	}
	names := dashboardMetrics(t, d)
	for _, want := range []string{
		"rocketmq_rpc_latency_bucket",           // ACK/CHANGE latency per code, SYSTEM_BUSY replies
		"popshim_writer_batch_mutations_bucket", // batch size
		"popshim_writer_fsyncs_total",           // fsyncs
		"popshim_writer_queue_depth",            // lane depths
		"popshim_writer_rejects_total",          // rejects
		"popshim_parked_polls",                  // parked polls
		"popshim_revive_lag_milliseconds",       // revive lag
		"popshim_writer_failed_mutations_total", // failed mutations
		"popshim_writer_queued_bytes",           // queued bytes
		"popshim_writer_write_seconds_bucket",   // fsync latency
		"popshim_writer_queue_head_wait_seconds_bucket",
	} {
		require.Contains(t, names, want)
	}
}

// TestDashboardMetricsAreExported starts a real popshim, drives SEND, POP,
// ACK and CHANGE_MESSAGE_INVISIBLETIME so the histograms have series,
// scrapes /metrics and requires every metric name the dashboard uses among
// the exported sample names (histograms as _bucket, _sum, _count).
func TestDashboardMetricsAreExported(t *testing.T) {
	st := startBroker(t)
	drive(t, st)
	// A reply can reach the client just before its rocketmq_rpc_latency
	// observation is recorded (direct replies), so the scrape waits for
	// the last requests' series.
	var exported map[string]bool
	require.Eventually(t, func() bool {
		exported = scrape(t, "http://"+st.MetricsAddr()+"/metrics")
		return exported[`rocketmq_rpc_latency_bucket{request_code="ack_message"}`] &&
			exported[`rocketmq_rpc_latency_bucket{request_code="change_message_invisibletime"}`]
	}, 10*time.Second, 10*time.Millisecond)
	names := dashboardMetrics(t, loadDashboard(t))
	require.GreaterOrEqual(t, len(names), 15, "the extractor found the dashboard's metrics: %v", names)
	var missing []string
	for _, n := range names {
		if !exported[n] {
			missing = append(missing, n)
		}
	}
	require.Empty(t, missing, "metrics the dashboard queries but popshim does not export")

	// The ACK and CHANGE series the latency panel selects exist.
	require.True(t, exported[`rocketmq_rpc_latency_bucket{request_code="ack_message"}`])
	require.True(t, exported[`rocketmq_rpc_latency_bucket{request_code="change_message_invisibletime"}`])
}

// startBroker runs an in-process popshim (stacktest.Start).
func startBroker(t *testing.T) *stack.Stack {
	t.Helper()
	return stacktest.StartEdited(t, nil)
}

// drive sends 4 messages through the name server, pops them from one
// queue at a time until all are held, acks all but one and changes the
// invisible time of that one.
func drive(t *testing.T, st *stack.Stack) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const topic, group = "DashTopic", "dash_g"
	_, err := tools.Send(ctx, tools.SendOptions{Namesrv: st.NamesrvAddr(), Topic: topic, Count: 4, Tags: "TagA"})
	require.NoError(t, err)
	c, err := client.Dial(st.BrokerAddr())
	require.NoError(t, err)
	defer c.Close()
	var receipts []client.Receipt
	for len(receipts) < 4 {
		req := codec.NewRequest(codec.RequestPopMessage, 0, map[string]string{}, nil)
		codec.PopMessageRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: -1, MaxMsgNums: 32, InvisibleTime: 60000,
			PollTime: 1000, BornTime: time.Now().UnixMilli(), ExpType: "TAG", Exp: "*"}.Encode(req)
		resp, err := c.Invoke(ctx, req)
		require.NoError(t, err)
		if resp.Code == codec.Success {
			receipts, err = client.ReceiptsFromPop(receipts, resp, topic, group, "popshim-a")
			require.NoError(t, err)
		}
	}
	for i, r := range receipts {
		var req *codec.Command
		if i == 0 {
			req = codec.NewRequest(codec.RequestChangeMessageInvisibleTime, 0, map[string]string{}, nil)
			codec.ChangeInvisibleTimeRequestHeader{ConsumerGroup: group, Topic: r.Topic, QueueID: r.QueueID, Offset: r.Offset,
				ExtraInfo: r.ExtraInfo, InvisibleTime: 30000}.Encode(req)
		} else {
			req = codec.NewRequest(codec.RequestAckMessage, 0, map[string]string{}, nil)
			codec.AckMessageRequestHeader{ConsumerGroup: group, Topic: r.Topic, QueueID: r.QueueID, Offset: r.Offset, ExtraInfo: r.ExtraInfo}.Encode(req)
		}
		resp, err := c.Invoke(ctx, req)
		require.NoError(t, err)
		require.Equal(t, codec.Success, resp.Code, resp.Remark)
	}
}

// scrape reads the Prometheus text format at url and returns the set of
// sample names, plus `name{request_code="x"}` for every request_code label
// value seen.
func scrape(t *testing.T, url string) map[string]bool {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	code := regexp.MustCompile(`request_code="([^"]*)"`)
	out := map[string]bool{}
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 64<<20))
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		end := strings.IndexAny(line, "{ ")
		if end < 0 {
			continue
		}
		name := line[:end]
		out[name] = true
		if m := code.FindStringSubmatch(line); m != nil {
			out[name+`{request_code="`+m[1]+`"}`] = true
		}
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, out)
	return out
}
