//go:build interop

// Package interop runs rocketmq-client-go v2, a client nobody here wrote, against a real popshim process.
// The Go client has no POP support: its push consumer uses the PULL path (QUERY_CONSUMER_OFFSET,
// PULL_MESSAGE, UPDATE_CONSUMER_OFFSET) and its producer sends SEND_MESSAGE(10) and SEND_BATCH_MESSAGE(320).
//
// Run through testdata/interop/run.sh, or by hand:
//
//	go build -o /tmp/popshim . && POPSHIM_BIN=/tmp/popshim go test -tags interop ./testdata/interop/go/ -v
package interop

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"
)

const total = 1000

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// spec is what message i must look like when consumed.
type spec struct {
	tag   string
	keys  []string
	props map[string]string
	body  []byte
}

func makeSpec(topic string, i int) spec {
	body := []byte(fmt.Sprintf("go body %d of %s %s", i, topic, strings.Repeat("y", i%89)))
	if i == 7 { // above the producer's 4 KiB compressMsgBodyOverHowmuch: sent zlib-compressed
		var b bytes.Buffer
		for b.Len() < 8*1024+77 {
			fmt.Fprintf(&b, "big go body of %s #%d at %d\n", topic, i, b.Len())
		}
		body = b.Bytes()
	}
	return spec{
		tag:  []string{"TagA", "TagB", "TagC"}[i%3],
		keys: []string{fmt.Sprintf("gk-%d", i), fmt.Sprintf("galt-%d", i)},
		props: map[string]string{
			"idx":   strconv.Itoa(i),
			"run":   topic,
			"color": []string{"red", "green", "blue", "cyan"}[i%4],
			"note":  fmt.Sprintf("h\u00e9llo \u03bb-%d", i),
		},
		body: body,
	}
}

func (s spec) message(topic string) *primitive.Message {
	m := primitive.NewMessage(topic, s.body)
	m.WithTag(s.tag)
	m.WithKeys(s.keys)
	for k, v := range s.props {
		m.WithProperty(k, v)
	}
	return m
}

// check returns "" when m carries exactly what s says, else what differs.
func (s spec) check(topic string, m *primitive.MessageExt) string {
	var diffs []string
	if m.Topic != topic {
		diffs = append(diffs, fmt.Sprintf("topic %q", m.Topic))
	}
	if !bytes.Equal(m.Body, s.body) {
		diffs = append(diffs, fmt.Sprintf("body (%d bytes, want %d)", len(m.Body), len(s.body)))
	}
	if m.GetTags() != s.tag {
		diffs = append(diffs, fmt.Sprintf("tags %q want %q", m.GetTags(), s.tag))
	}
	if m.GetKeys() != strings.Join(s.keys, " ") {
		diffs = append(diffs, fmt.Sprintf("keys %q want %q", m.GetKeys(), strings.Join(s.keys, " ")))
	}
	for k, v := range s.props {
		if got := m.GetProperty(k); got != v {
			diffs = append(diffs, fmt.Sprintf("property %s=%q want %q", k, got, v))
		}
	}
	return strings.Join(diffs, ", ")
}

// popshim is one broker process started from $POPSHIM_BIN on free loopback ports.
type popshim struct {
	cmd     *exec.Cmd
	namesrv string
	broker  string
	metrics string // host:port of /metrics
	log     string
	pidFile string
}

func startPopshim(t *testing.T, extra ...string) *popshim {
	t.Helper()
	bin := os.Getenv("POPSHIM_BIN")
	if bin == "" {
		t.Fatal("POPSHIM_BIN is not set: run testdata/interop/run.sh, or build popshim and point POPSHIM_BIN at it")
	}
	work := os.Getenv("POPSHIM_WORKDIR")
	if work == "" {
		work = t.TempDir()
	}
	dir, err := os.MkdirTemp(work, "go-suite-")
	if err != nil {
		t.Fatal(err)
	}
	ports := freePorts(t, 3)
	p := &popshim{
		namesrv: fmt.Sprintf("127.0.0.1:%d", ports[1]),
		broker:  fmt.Sprintf("127.0.0.1:%d", ports[0]),
		metrics: fmt.Sprintf("127.0.0.1:%d", ports[2]),
		log:     filepath.Join(dir, "popshim.log"),
	}
	logf, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(bin, "serve",
		"--listen", p.broker,
		"--broker-ip", "127.0.0.1",
		"--namesrv-listen", p.namesrv,
		"--metrics-listen", p.metrics,
		"--grpc-listen=", // the remoting suite: no gRPC port (the default :8081 may be taken)
		"--data-dir", filepath.Join(dir, "data"),
		"--log-format", "console")
	p.cmd.Args = append(p.cmd.Args, extra...)
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	if err := os.MkdirAll(filepath.Join(work, "pids"), 0o755); err == nil {
		p.pidFile = filepath.Join(work, "pids", filepath.Base(dir)+".pid")
		_ = os.WriteFile(p.pidFile, []byte(strconv.Itoa(p.cmd.Process.Pid)), 0o644)
	}
	exited := make(chan error, 1)
	go func() { exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		_ = logf.Close()
		if p.pidFile != "" {
			_ = os.Remove(p.pidFile)
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for !(listening(p.broker) && listening(p.namesrv)) {
		select {
		case err := <-exited:
			t.Fatalf("popshim exited during start-up: %v\n%s", err, p.tail())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("popshim not listening on %s and %s after 30 s\n%s", p.broker, p.namesrv, p.tail())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return p
}

func (p *popshim) tail() string {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	// console logs carry ANSI colours even in a file; strip them for readable failure messages
	return "popshim log tail:\n" + ansi.ReplaceAllString(strings.Join(lines, "\n"), "")
}

func listening(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ls []net.Listener
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		_ = l.Close()
	}
	return ports
}

// TestGoClientProduceAndPushConsume sends 1,000 messages with the Go producer (sync, async, oneway and
// batch) and consumes them with the Go push consumer, which uses the PULL path. Every message must arrive
// exactly once with its body, tag, keys and properties.
func TestGoClientProduceAndPushConsume(t *testing.T) {
	rlog.SetLogLevel("error")
	shim := startPopshim(t)
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	topic := "go_it_" + suffix
	ns := primitive.NewPassthroughResolver([]string{shim.namesrv})

	p, err := rocketmq.NewProducer(
		producer.WithNsResolver(ns),
		producer.WithGroupName("go_pg_"+suffix),
		producer.WithInstanceName("go_p_"+suffix),
		producer.WithRetry(2),
		producer.WithSendMsgTimeout(10*time.Second),
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatalf("producer start: %v", err)
	}
	defer func() { _ = p.Shutdown() }()

	specs := make([]spec, total)
	for i := range specs {
		specs[i] = makeSpec(topic, i)
	}
	send(t, p, topic, specs, shim)

	var mu sync.Mutex
	seen := make(map[int]int)
	var problems []string
	c, err := rocketmq.NewPushConsumer(
		consumer.WithNsResolver(ns),
		consumer.WithGroupName("go_cg_"+suffix),
		consumer.WithInstance("go_c_"+suffix),
		consumer.WithConsumerModel(consumer.Clustering),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
	)
	if err != nil {
		t.Fatal(err)
	}
	err = c.Subscribe(topic, consumer.MessageSelector{}, func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range msgs {
			i, err := strconv.Atoi(m.GetProperty("idx"))
			if err != nil || i < 0 || i >= total {
				problems = append(problems, fmt.Sprintf("message never sent: %v", m))
				continue
			}
			seen[i]++
			if d := specs[i].check(topic, m); d != "" {
				problems = append(problems, fmt.Sprintf("idx %d: %s", i, d))
			}
		}
		return consumer.ConsumeSuccess, nil
	})
	startPushConsumer(t, shim, c, err)

	deadline := time.Now().Add(120 * time.Second)
	for {
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		if n == total {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("push consumer got %d of %d distinct messages within 120 s\n%s", n, total, shim.tail())
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(3 * time.Second) // give duplicates, if any, a chance to show up
	mu.Lock()
	defer mu.Unlock()
	for _, pr := range problems {
		t.Error(pr)
	}
	for i := 0; i < total; i++ {
		if seen[i] != 1 {
			t.Errorf("idx %d delivered %d times, want once", i, seen[i])
		}
	}
}

// send produces specs: 30 % sync, 30 % async, 10 % oneway, the rest in batches of 50; message 7 (the big,
// compressed one) is always sync. Every sync, async and batch result must be SEND_OK.
func send(t *testing.T, p rocketmq.Producer, topic string, specs []spec, shim *popshim) {
	t.Helper()
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var asyncErrs []string
	var batch []*primitive.Message
	flush := func() {
		if len(batch) == 0 {
			return
		}
		r, err := p.SendSync(ctx, batch...)
		if err != nil || r.Status != primitive.SendOK {
			t.Fatalf("batch of %d: result %v err %v\n%s", len(batch), r, err, shim.tail())
		}
		batch = nil
	}
	n := len(specs)
	for i, s := range specs {
		m := s.message(topic)
		switch {
		case i == 7 || i < n*3/10:
			r, err := p.SendSync(ctx, m)
			if err != nil || r.Status != primitive.SendOK {
				t.Fatalf("sync send %d: result %v err %v\n%s", i, r, err, shim.tail())
			}
		case i < n*6/10:
			wg.Add(1)
			i := i
			err := p.SendAsync(ctx, func(_ context.Context, r *primitive.SendResult, err error) {
				defer wg.Done()
				if err != nil || r.Status != primitive.SendOK {
					mu.Lock()
					asyncErrs = append(asyncErrs, fmt.Sprintf("async send %d: result %v err %v", i, r, err))
					mu.Unlock()
				}
			}, m)
			if err != nil {
				wg.Done()
				t.Fatalf("async send %d: %v", i, err)
			}
		case i < n*7/10:
			if err := p.SendOneWay(ctx, m); err != nil {
				t.Fatalf("oneway send %d: %v", i, err)
			}
		default:
			batch = append(batch, m)
			if len(batch) == 50 {
				flush()
			}
		}
	}
	flush()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("async send callbacks missing after 60 s\n%s", shim.tail())
	}
	for _, e := range asyncErrs {
		t.Error(e)
	}
	if t.Failed() {
		t.FailNow()
	}
}

// startPushConsumer fails the test when subscribing (subErr) or starting c
// failed, with the broker's log tail, and shuts c down when the test ends.
func startPushConsumer(t *testing.T, shim *popshim, c rocketmq.PushConsumer, subErr error) {
	t.Helper()
	if subErr != nil {
		t.Fatal(subErr)
	}
	if err := c.Start(); err != nil {
		t.Fatalf("push consumer start: %v\n%s", err, shim.tail())
	}
	t.Cleanup(func() { _ = c.Shutdown() })
}
