//go:build crash

// Package crash kills the real popshim binary with SIGKILL during a full-disk
// episode and after its recovery, and checks that nothing acknowledged is
// lost: every message whose SEND answered SUCCESS is readable, and no
// message whose ACK answered SUCCESS comes back after its invisible time.
//
// It needs the built binary and a tmpfs, so it is not part of `go test ./...`
// (which runs before the build in `make test`); `make crash` runs it after
// building bin/popshim:
//
//	go build -o bin/popshim . && POPSHIM_BIN=$PWD/bin/popshim go test -tags crash -race -count=1 -v ./testdata/crash/
package crash

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

const (
	topic   = "CrashT"
	group   = "CrashG"
	bodyLen = 64 << 10
	// invisibleMs is the invisible time of every POP: ACKs follow their POP
	// at once, and the checks wait past it for unacknowledged messages.
	invisibleMs = 5000
	// waitFor bounds every polling loop (a hang guard, not a timing check).
	waitFor = 60 * time.Second
)

// ledger is what the clients were told.
type ledger struct {
	sent    map[int]bool // SEND answered SUCCESS
	maybe   map[int]bool // SEND answered SYSTEM_ERROR: may or may not be stored
	acked   map[int]bool // ACK answered SUCCESS
	next    int          // next message number
	answers map[string]map[int32]int
}

func newLedger() *ledger {
	return &ledger{sent: map[int]bool{}, maybe: map[int]bool{}, acked: map[int]bool{}, answers: map[string]map[int32]int{}}
}

func (l *ledger) count(what string, code int32) {
	if l.answers[what] == nil {
		l.answers[what] = map[int32]int{}
	}
	l.answers[what][code]++
}

// crashClient is one remoting connection with bounded calls.
type crashClient struct {
	t *testing.T
	c *client.Conn
}

func dial(t *testing.T, addr string) *crashClient {
	t.Helper()
	c, err := client.Dial(addr)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &crashClient{t: t, c: c}
}

func (c *crashClient) call(req *codec.Command) *codec.Command {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	resp, err := c.c.Invoke(ctx, req)
	if err != nil {
		c.t.Fatalf("request %d: %v", req.Code, err)
	}
	return resp
}

func body(i int) []byte {
	b := make([]byte, bodyLen)
	for j := range b {
		b[j] = 'x'
	}
	copy(b, "m-"+strconv.Itoa(i)+"-")
	return b
}

// msgNum returns i of a body made by body(i), or -1.
func msgNum(b []byte) int {
	s, ok := strings.CutPrefix(string(b[:min(len(b), 24)]), "m-")
	if !ok {
		return -1
	}
	n, _, _ := strings.Cut(s, "-")
	i, err := strconv.Atoi(n)
	if err != nil {
		return -1
	}
	return i
}

func (c *crashClient) createTopic() {
	c.t.Helper()
	req := codec.NewRequest(codec.RequestUpdateAndCreateTopic, 0, nil, nil)
	codec.CreateTopicRequestHeader{Topic: topic, DefaultTopic: "TBW102", ReadQueueNums: 1, WriteQueueNums: 1,
		Perm: 6, TopicFilterType: "SINGLE_TAG"}.Encode(req)
	if resp := c.call(req); resp.Code != codec.Success {
		c.t.Fatalf("create topic: %d %s", resp.Code, resp.Remark)
	}
}

// send sends the next message, records the answer and returns its code.
func (c *crashClient) send(l *ledger) int32 {
	c.t.Helper()
	i := l.next
	l.next++
	ps, _ := codec.EncodeProperties(map[string]string{"WAIT": "true"})
	h := codec.SendMessageRequestHeader{ProducerGroup: "CrashPG", Topic: topic, DefaultTopic: "TBW102", DefaultTopicQueueNums: 4,
		QueueID: 0, BornTimestamp: time.Now().UnixMilli(), Properties: ps}
	req := codec.NewRequest(codec.RequestSendMessageV2, 0, nil, body(i))
	h.EncodeV2(req)
	resp := c.call(req)
	l.count("SEND", resp.Code)
	switch resp.Code {
	case codec.Success:
		l.sent[i] = true
	case codec.SystemError:
		l.maybe[i] = true
	case codec.ServiceNotAvailable:
	default:
		c.t.Fatalf("SEND %d: unexpected code %d %s", i, resp.Code, resp.Remark)
	}
	return resp.Code
}

// popped is one POPped message with its receipt handle.
type popped struct {
	n      int
	handle codec.ExtraInfo
	raw    string
}

// pop pops up to max messages of every queue of the topic (retry included).
func (c *crashClient) pop(max int32, l *ledger) (int32, []popped) {
	c.t.Helper()
	h := codec.PopMessageRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: -1, MaxMsgNums: max,
		InvisibleTime: invisibleMs, PollTime: 200, BornTime: time.Now().UnixMilli(), InitMode: codec.ConsumeInitModeMin}
	req := codec.NewRequest(codec.RequestPopMessage, 0, nil, nil)
	h.Encode(req)
	resp := c.call(req)
	l.count("POP", resp.Code)
	if resp.Code != codec.Success {
		return resp.Code, nil
	}
	msgs, err := codec.DecodeMessages(resp.Body)
	if err != nil {
		c.t.Fatalf("POP body: %v", err)
	}
	var out []popped
	for _, m := range msgs {
		ck, ok := m.Property(codec.PropertyPopCK)
		if !ok {
			c.t.Fatalf("message at %d without POP_CK", m.QueueOffset)
		}
		ei, err := codec.ParseExtraInfo(ck)
		if err != nil {
			c.t.Fatalf("POP_CK %q: %v", ck, err)
		}
		out = append(out, popped{n: msgNum(m.Body), handle: ei, raw: ck})
	}
	return resp.Code, out
}

// ack acks p, records the answer and returns its code.
func (c *crashClient) ack(p popped, l *ledger) int32 {
	c.t.Helper()
	h := codec.AckMessageRequestHeader{ConsumerGroup: group, Topic: p.handle.RealTopic(topic, group),
		QueueID: p.handle.QueueID, Offset: p.handle.QueueOffset, ExtraInfo: p.raw, BrokerName: p.handle.BrokerName}
	req := codec.NewRequest(codec.RequestAckMessage, 0, nil, nil)
	h.Encode(req)
	resp := c.call(req)
	l.count("ACK", resp.Code)
	switch resp.Code {
	case codec.Success:
		l.acked[p.n] = true
	case codec.SystemError:
	default:
		c.t.Fatalf("ACK of message %d: unexpected code %d %s", p.n, resp.Code, resp.Remark)
	}
	return resp.Code
}

// pullAll reads the whole queue with PULL (no offset committed) and returns
// the message numbers found.
func (c *crashClient) pullAll() map[int]bool {
	c.t.Helper()
	found := map[int]bool{}
	for off := int64(0); ; {
		h := codec.PullMessageRequestHeader{ConsumerGroup: "CrashReader", Topic: topic, QueueID: 0, QueueOffset: off,
			MaxMsgNums: 32, CommitOffset: -1, SysFlag: codec.PullSysFlagSubscription, Subscription: "*", ExpressionType: "TAG"}
		req := codec.NewRequest(codec.RequestPullMessage, 0, nil, nil)
		h.Encode(req)
		resp := c.call(req)
		if resp.Code != codec.Success {
			return found // PULL_NOT_FOUND / OFFSET_MOVED at the end of the queue
		}
		ph, err := codec.DecodePullMessageResponseHeader(resp.ExtFields)
		if err != nil {
			c.t.Fatalf("PULL header: %v", err)
		}
		msgs, err := codec.DecodeMessages(resp.Body)
		if err != nil {
			c.t.Fatalf("PULL body: %v", err)
		}
		for _, m := range msgs {
			found[msgNum(m.Body)] = true
		}
		if ph.NextBeginOffset <= off {
			c.t.Fatalf("PULL at %d did not advance", off)
		}
		off = ph.NextBeginOffset
	}
}

// verify checks, against the ledger, that every SEND SUCCESS is stored and
// that group G receives every message it has not acknowledged (those popped
// and not acked after their invisible time) and none it has. Each message
// received is acked, so the ledger ends with everything stored acked.
func verify(t *testing.T, c *crashClient, l *ledger, stage string) {
	t.Helper()
	stored := c.pullAll()
	for i := range l.sent {
		if !stored[i] {
			t.Errorf("%s: message %d answered SUCCESS to its SEND and is not stored", stage, i)
		}
	}
	want := map[int]bool{}
	for i := range l.sent {
		if !l.acked[i] {
			want[i] = true
		}
	}
	for i := range l.maybe {
		if stored[i] && !l.acked[i] {
			want[i] = true // stored after a failed write: delivered as any message
		}
	}
	t.Logf("%s: %d sent, %d acked, %d stored, %d to receive; answers %v", stage, len(l.sent), len(l.acked), len(stored), len(want), l.answers)
	deadline := time.Now().Add(waitFor)
	for len(want) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d unacknowledged messages not received within %s", stage, len(want), waitFor)
		}
		_, ms := c.pop(32, l)
		for _, p := range ms {
			if l.acked[p.n] {
				t.Fatalf("%s: message %d redelivered although its ACK answered SUCCESS", stage, p.n)
			}
			if !want[p.n] {
				t.Fatalf("%s: message %d delivered, not expected (sent %v, maybe %v)", stage, p.n, l.sent[p.n], l.maybe[p.n])
			}
			delete(want, p.n)
			if code := c.ack(p, l); code != codec.Success {
				t.Fatalf("%s: ACK after recovery answered %d", stage, code)
			}
		}
	}
	// One more invisible time: nothing acked comes back.
	end := time.Now().Add(invisibleMs*time.Millisecond + time.Second)
	for time.Now().Before(end) {
		_, ms := c.pop(32, l)
		for _, p := range ms {
			t.Fatalf("%s: message %d redelivered after everything was acked (acked %v)", stage, p.n, l.acked[p.n])
		}
	}
}

// sendUntilSuccess sends until a SEND answers SUCCESS (the broker recovered),
// bounded by waitFor.
func sendUntilSuccess(t *testing.T, c *crashClient, l *ledger, stage string) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for c.send(l) != codec.Success {
		if time.Now().After(deadline) {
			t.Fatalf("%s: no SEND succeeded within %s", stage, waitFor)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// popAndAckHalf pops up to n messages and acks every other one.
func popAndAckHalf(t *testing.T, c *crashClient, l *ledger, n int32) {
	t.Helper()
	_, ms := c.pop(n, l)
	if len(ms) == 0 {
		t.Fatal("POP returned nothing")
	}
	for k, p := range ms {
		if k%2 == 0 {
			if code := c.ack(p, l); code != codec.Success {
				t.Fatalf("ACK of message %d answered %d", p.n, code)
			}
		}
	}
}

// TestKill9DiskFull: SIGKILL during a full-disk episode (the writer has
// failed and refuses work) and again after the broker recovered loses
// nothing acknowledged.
func TestKill9DiskFull(t *testing.T) {
	bin, mnt, dir, logDir, addr := fullDiskEnv(t)
	l := newLedger()

	// Before: messages stored, some popped and acked.
	b := start(t, bin, dir, logDir, addr, 1)
	c := dial(t, addr)
	c.createTopic()
	for range 40 {
		if code := c.send(l); code != codec.Success {
			t.Fatalf("SEND before the disk filled answered %d", code)
		}
	}
	popAndAckHalf(t, c, l, 10)
	_, inFlight := c.pop(8, l) // acked (or not) while the disk is full
	if len(inFlight) == 0 {
		t.Fatal("second POP returned nothing")
	}

	// The disk fills: SENDs answer SERVICE_NOT_AVAILABLE (after the one
	// whose write failed: SYSTEM_ERROR), ACKs SYSTEM_ERROR.
	ballast := fillUntilRefused(t, c, l, mnt, 5)
	for _, p := range inFlight {
		if code := c.ack(p, l); code != codec.SystemError {
			t.Errorf("ACK of message %d on a full disk answered %d, want SYSTEM_ERROR (1)", p.n, code)
		}
	}
	t.Logf("full disk: answers %v", l.answers)

	// kill -9 while the writer is failed; restart with the disk still full.
	b.kill(t)
	b = start(t, bin, dir, logDir, addr, 2)
	select {
	case <-b.exited:
		b.checkNoAbort(t)
		t.Logf("restart on the full disk failed cleanly (%v):\n%s", b.err, b.tail())
		if err := os.Remove(ballast); err != nil {
			t.Fatal(err)
		}
		b = start(t, bin, dir, logDir, addr, 3)
		select {
		case <-b.exited:
			t.Fatalf("popshim does not start after space returned: %v\n%s", b.err, b.tail())
		default:
		}
	default:
		t.Logf("restart on the full disk: popshim started and listens")
		if err := os.Remove(ballast); err != nil {
			t.Fatal(err)
		}
	}
	c = dial(t, addr)
	sendUntilSuccess(t, c, l, "after the first restart")
	verify(t, c, l, "after recovery")

	// Working again: SEND, POP, ACK; then kill -9 with messages in flight.
	for range 20 {
		if code := c.send(l); code != codec.Success {
			t.Fatalf("SEND after recovery answered %d", code)
		}
	}
	popAndAckHalf(t, c, l, 10)
	b.kill(t)
	b = start(t, bin, dir, logDir, addr, 4)
	select {
	case <-b.exited:
		t.Fatalf("popshim does not start after a kill -9 with space: %v\n%s", b.err, b.tail())
	default:
	}
	c = dial(t, addr)
	verify(t, c, l, "after the second kill -9")
	if code := c.send(l); code != codec.Success {
		t.Fatalf("SEND after the second restart answered %d", code)
	}
	popAndAckHalf(t, c, l, 1)
}
