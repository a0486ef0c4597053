//go:build crash

package crash

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/popshim/popshim/codec"
)

// timerTopic is the real topic of every timer message (one queue).
const timerTopic = "CrashTimerT"

// timerSent is one SEND of a delayed message that answered SUCCESS.
type timerSent struct {
	key string
	due int64 // lower bound of its due time, broker clock (ms)
}

// freeAddr returns a loopback address with a free port.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// popshimBin returns $POPSHIM_BIN or skips the test.
func popshimBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("POPSHIM_BIN")
	if bin == "" {
		t.Skip("skipping: POPSHIM_BIN is not set (make crash builds bin/popshim and sets it)")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("skipping: popshim binary %s: %v", bin, err)
	}
	return bin
}

// createTimerTopic creates timerTopic with one queue.
func createTimerTopic(c *crashClient) {
	c.t.Helper()
	req := codec.NewRequest(codec.RequestUpdateAndCreateTopic, 0, nil, nil)
	codec.CreateTopicRequestHeader{Topic: timerTopic, DefaultTopic: "TBW102", ReadQueueNums: 1, WriteQueueNums: 1,
		Perm: 6, TopicFilterType: "SINGLE_TAG"}.Encode(req)
	if resp := c.call(req); resp.Code != codec.Success {
		c.t.Fatalf("create topic: %d %s", resp.Code, resp.Remark)
	}
}

// sendTimers sends n messages concurrently, message i with the properties
// props(i) plus UNIQ_KEY prefix-i, and returns those answered SUCCESS; due
// gives the lower bound of message i's due time from its send start.
func sendTimers(t *testing.T, c *crashClient, prefix string, n int, props func(i int) map[string]string, due func(i int, start int64) int64) []timerSent {
	t.Helper()
	var (
		mu   sync.Mutex
		out  []timerSent
		errs []string
		wg   sync.WaitGroup
	)
	work := make(chan int)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				key := prefix + "-" + strconv.Itoa(i)
				p := props(i)
				p[codec.PropertyWaitStoreMsgOK] = "true"
				p[codec.PropertyUniqClientMessageIDKeyIdx] = key
				ps, _ := codec.EncodeProperties(p)
				start := time.Now().UnixMilli()
				h := codec.SendMessageRequestHeader{ProducerGroup: "CrashTimerPG", Topic: timerTopic, DefaultTopic: "TBW102",
					DefaultTopicQueueNums: 1, QueueID: 0, BornTimestamp: start, Properties: ps}
				req := codec.NewRequest(codec.RequestSendMessageV2, 0, nil, []byte(key))
				h.EncodeV2(req)
				ctx, cancel := context.WithTimeout(context.Background(), waitFor)
				resp, err := c.c.Invoke(ctx, req)
				cancel()
				mu.Lock()
				switch {
				case err != nil:
					errs = append(errs, fmt.Sprintf("%s: %v", key, err))
				case resp.Code != codec.Success:
					errs = append(errs, fmt.Sprintf("%s: code %d %s", key, resp.Code, resp.Remark))
				default:
					out = append(out, timerSent{key: key, due: due(i, start)})
				}
				mu.Unlock()
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d SENDs failed before any kill, first: %s", len(errs), errs[0])
	}
	return out
}

// storedTimer is one message read back from timerTopic.
type storedTimer struct {
	count int   // times its UNIQ_KEY is in the queue
	store int64 // earliest store timestamp
}

// pullTimers reads the whole queue of timerTopic with PULL and returns each
// UNIQ_KEY found with its count and earliest store timestamp.
func pullTimers(t *testing.T, c *crashClient) map[string]*storedTimer {
	t.Helper()
	return pullTopic(t, c, timerTopic)
}

// pullTopic reads queue 0 of topic with PULL and returns each UNIQ_KEY
// found with its count and earliest store timestamp.
func pullTopic(t *testing.T, c *crashClient, topic string) map[string]*storedTimer {
	t.Helper()
	found := map[string]*storedTimer{}
	for off := int64(0); ; {
		h := codec.PullMessageRequestHeader{ConsumerGroup: "CrashTimerReader", Topic: topic, QueueID: 0, QueueOffset: off,
			MaxMsgNums: 32, CommitOffset: -1, SysFlag: codec.PullSysFlagSubscription, Subscription: "*", ExpressionType: "TAG"}
		req := codec.NewRequest(codec.RequestPullMessage, 0, nil, nil)
		h.Encode(req)
		resp := c.call(req)
		if resp.Code != codec.Success {
			return found
		}
		ph, err := codec.DecodePullMessageResponseHeader(resp.ExtFields)
		if err != nil {
			t.Fatalf("PULL header: %v", err)
		}
		msgs, err := codec.DecodeMessages(resp.Body)
		if err != nil {
			t.Fatalf("PULL body: %v", err)
		}
		for _, m := range msgs {
			key, _ := m.Property(codec.PropertyUniqClientMessageIDKeyIdx)
			s := found[key]
			if s == nil {
				s = &storedTimer{store: m.StoreTimestamp}
				found[key] = s
			}
			s.count++
			s.store = min(s.store, m.StoreTimestamp)
		}
		if ph.NextBeginOffset <= off {
			t.Fatalf("PULL at %d did not advance", off)
		}
		off = ph.NextBeginOffset
	}
}

// awaitDelivered pulls until every sent key is stored (bounded by waitFor),
// then once more after settle, and returns the final read.
func awaitDelivered(t *testing.T, c *crashClient, sent []timerSent, settle time.Duration) map[string]*storedTimer {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		got := pullTimers(t, c)
		missing := 0
		for _, s := range sent {
			if got[s.key] == nil {
				missing++
			}
		}
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d timers answered SUCCESS and are not delivered within %s", missing, len(sent), waitFor)
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(settle)
	return pullTimers(t, c)
}

// metricValue scrapes one series (its only label set: the broker's constant
// labels) from http://addr/metrics.
func metricValue(addr, name string) (float64, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, name); ok && (strings.HasPrefix(rest, " ") || strings.HasPrefix(rest, "{")) {
			return strconv.ParseFloat(rest[strings.LastIndexByte(rest, ' ')+1:], 64)
		}
	}
	return 0, fmt.Errorf("%s not in /metrics", name)
}

// TestKill9TimersPending: timer and delay-level messages whose SEND answered
// SUCCESS survive a kill -9 before they are due, and after the restart each
// is delivered exactly once, none before its due time.
func TestKill9TimersPending(t *testing.T) {
	bin := popshimBin(t)
	dir, logDir, addr := t.TempDir(), t.TempDir(), freeAddr(t)
	b := start(t, bin, dir, logDir, addr, 1)
	c := dial(t, addr)
	createTimerTopic(c)
	dueAt := time.Now().Add(3 * time.Second).UnixMilli()
	const nTimer, nDelay = 300, 100
	sent := sendTimers(t, c, "timer", nTimer, func(int) map[string]string {
		return map[string]string{codec.PropertyTimerDeliverMS: strconv.FormatInt(dueAt, 10)}
	}, func(int, int64) int64 { return dueAt })
	sent = append(sent, sendTimers(t, c, "delay", nDelay, func(int) map[string]string {
		return map[string]string{codec.PropertyDelayTimeLevel: "1"} // 1 s
	}, func(_ int, start int64) int64 { return start + 1000 })...)
	killedAt := time.Now().UnixMilli()
	b.kill(t)
	if killedAt >= dueAt {
		t.Logf("sending took until %d ms after the TIMER_DELIVER_MS due time: those timers may have been due at the kill", killedAt-dueAt)
	}

	b = start(t, bin, dir, logDir, addr, 2)
	select {
	case <-b.exited:
		t.Fatalf("popshim does not start after kill -9 with timers pending: %v\n%s", b.err, b.tail())
	default:
	}
	c = dial(t, addr)
	got := awaitDelivered(t, c, sent, time.Second)
	dups, early := 0, 0
	for _, s := range sent {
		g := got[s.key]
		if g.count != 1 {
			dups++
			t.Errorf("timer %s delivered %d times", s.key, g.count)
		}
		if g.store < s.due {
			early++
			t.Errorf("timer %s stored at %d, %d ms before its due time", s.key, g.store, s.due-g.store)
		}
	}
	if len(got) != len(sent) {
		t.Errorf("%d keys in the topic, %d sent", len(got), len(sent))
	}
	t.Logf("%d timers (%d TIMER_DELIVER_MS, %d DELAY 1) answered SUCCESS, killed %d ms before the timer due time; after restart: %d delivered, %d duplicates, %d early",
		len(sent), nTimer, nDelay, dueAt-killedAt, len(got), dups, early)
}

// TestKill9TimersDelivering: kill -9 while thousands of timers due at the
// same moment are being delivered; after the restart every one is delivered
// at least once, and duplicates are counted (append and delete share one
// WriteBatch, so none are expected).
func TestKill9TimersDelivering(t *testing.T) {
	bin := popshimBin(t)
	dir, logDir, addr, maddr := t.TempDir(), t.TempDir(), freeAddr(t), freeAddr(t)
	b := start(t, bin, dir, logDir, addr, 1, "--metrics-listen", maddr)
	c := dial(t, addr)
	createTimerTopic(c)
	const n = 5000
	dueAt := time.Now().Add(4 * time.Second).UnixMilli()
	sent := sendTimers(t, c, "burst", n, func(int) map[string]string {
		return map[string]string{codec.PropertyTimerDeliverMS: strconv.FormatInt(dueAt, 10)}
	}, func(int, int64) int64 { return dueAt })
	if now := time.Now().UnixMilli(); now >= dueAt {
		t.Logf("sending ended %d ms after the due time", now-dueAt)
	}

	// Kill once delivery has started and not finished.
	var atKill float64
	deadline := time.Now().Add(waitFor)
	for {
		v, err := metricValue(maddr, "rocketmq_timer_dequeue_total")
		if err == nil && v > 0 && v < n {
			b.kill(t)
			atKill = v
			break
		}
		if err == nil && v >= n {
			t.Fatalf("all %d timers delivered between two scrapes: no kill during delivery", n)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no timer delivered within %s (last scrape %v, %v)", waitFor, v, err)
		}
		time.Sleep(5 * time.Millisecond)
	}

	b = start(t, bin, dir, logDir, addr, 2, "--metrics-listen", maddr)
	select {
	case <-b.exited:
		t.Fatalf("popshim does not start after kill -9 during delivery: %v\n%s", b.err, b.tail())
	default:
	}
	c = dial(t, addr)
	got := awaitDelivered(t, c, sent, time.Second)
	dups, early := 0, 0
	for _, s := range sent {
		g := got[s.key]
		if g.count > 1 {
			dups += g.count - 1
		}
		if g.store < s.due {
			early++
		}
	}
	t.Logf("%d timers due at the same moment; killed with rocketmq_timer_dequeue_total %.0f; after restart: %d delivered, %d duplicate deliveries, %d early",
		len(sent), atKill, len(got), dups, early)
	if dups > 0 {
		t.Errorf("%d duplicate deliveries after a kill -9 during delivery", dups)
	}
	if early > 0 {
		t.Errorf("%d timers delivered before their due time", early)
	}
}
