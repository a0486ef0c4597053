//go:build crash

package crash

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// Transactional messages across kill -9: half messages whose SEND answered
// SUCCESS are checked and can be committed after a restart; commits cut by
// a kill leave every committed message exactly once in its topic, none
// lost, and no rolled-back one visible.

const (
	txnTopic = "CrashTxnT"
	txnGroup = "CrashTxnPG"
)

// txnFlags make checks come quickly and never run out during a test.
var txnFlags = []string{"--transaction-timeout", "1s", "--transaction-check-interval", "200ms", "--transaction-check-max", "100000"}

// halfSent is one half message whose SEND answered SUCCESS: what
// END_TRANSACTION needs, from the reply.
type halfSent struct {
	i           int
	key         string // UNIQ_KEY, also the body
	queueOffset int64  // tranStateTableOffset
	phys        int64  // commitLogOffset, decoded from msgId
}

// createTopicNamed creates name with one queue.
func createTopicNamed(c *crashClient, name string) {
	c.t.Helper()
	req := codec.NewRequest(codec.RequestUpdateAndCreateTopic, 0, nil, nil)
	codec.CreateTopicRequestHeader{Topic: name, DefaultTopic: "TBW102", ReadQueueNums: 1, WriteQueueNums: 1,
		Perm: 6, TopicFilterType: "SINGLE_TAG"}.Encode(req)
	if resp := c.call(req); resp.Code != codec.Success {
		c.t.Fatalf("create topic %s: %d %s", name, resp.Code, resp.Remark)
	}
}

// sendHalves sends n half messages "prefix-i" concurrently, as
// TransactionMQProducer does (TRAN_MSG, PGROUP, prepared sysFlag), and
// returns those answered SUCCESS, indexed by i.
func sendHalves(t *testing.T, c *crashClient, prefix string, n int) map[int]halfSent {
	t.Helper()
	var (
		mu   sync.Mutex
		out  = map[int]halfSent{}
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
				ps, _ := codec.EncodeProperties(map[string]string{codec.PropertyWaitStoreMsgOK: "true",
					codec.PropertyUniqClientMessageIDKeyIdx: key, codec.PropertyTransactionPrepared: "true",
					codec.PropertyProducerGroup: txnGroup})
				h := codec.SendMessageRequestHeader{ProducerGroup: txnGroup, Topic: txnTopic, DefaultTopic: "TBW102",
					DefaultTopicQueueNums: 1, QueueID: 0, SysFlag: codec.SysFlagTransactionPrepared,
					BornTimestamp: time.Now().UnixMilli(), Properties: ps}
				req := codec.NewRequest(codec.RequestSendMessageV2, 0, nil, []byte(key))
				h.EncodeV2(req)
				ctx, cancel := context.WithTimeout(context.Background(), waitFor)
				resp, err := c.c.Invoke(ctx, req)
				cancel()
				var r codec.SendMessageResponseHeader
				var phys int64
				if err == nil && resp.Code == codec.Success {
					if r, err = codec.DecodeSendMessageResponseHeader(resp.ExtFields); err == nil {
						_, phys, err = codec.DecodeOffsetMsgID(r.MsgID)
					}
				}
				mu.Lock()
				switch {
				case err != nil:
					errs = append(errs, fmt.Sprintf("%s: %v", key, err))
				case resp.Code != codec.Success:
					errs = append(errs, fmt.Sprintf("%s: code %d %s", key, resp.Code, resp.Remark))
				case r.TransactionID != key:
					errs = append(errs, fmt.Sprintf("%s: reply transactionId %q", key, r.TransactionID))
				default:
					out[i] = halfSent{i: i, key: key, queueOffset: r.QueueOffset, phys: phys}
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
		t.Fatalf("%d half SENDs failed before any kill, first: %s", len(errs), errs[0])
	}
	return out
}

// endReq is END_TRANSACTION for h (not oneway: the test wants the answer).
func endReq(h halfSent, decision int32) *codec.Command {
	req := codec.NewRequest(codec.RequestEndTransaction, 0, nil, nil)
	codec.EndTransactionRequestHeader{Topic: txnTopic, ProducerGroup: txnGroup, TranStateTableOffset: h.queueOffset,
		CommitLogOffset: h.phys, CommitOrRollback: decision, MsgID: h.key, TransactionID: h.key}.Encode(req)
	return req
}

// checkAnswerer is a producer connection of txnGroup that answers every
// CHECK_TRANSACTION_STATE with decide(key), oneway, as a Java producer.
type checkAnswerer struct {
	c       *client.Conn
	mu      sync.Mutex
	checked map[string]int
	answers atomic.Int64
}

// answerChecks dials addr, heartbeats as a producer of txnGroup and
// answers checks until the test ends.
func answerChecks(t *testing.T, addr string, decide func(key string) int32) *checkAnswerer {
	t.Helper()
	a := &checkAnswerer{checked: map[string]int{}}
	checks := make(chan *codec.Command, 1<<16)
	c, err := client.DialContext(context.Background(), addr, client.Options{OnRequest: func(req *codec.Command) *codec.Command {
		if req.Code == codec.RequestCheckTransactionState {
			checks <- req
		}
		return nil
	}})
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	a.c = c
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case req := <-checks:
				h, err := codec.DecodeCheckTransactionStateRequestHeader(req.ExtFields)
				if err != nil {
					continue
				}
				a.mu.Lock()
				a.checked[h.MsgID]++
				a.mu.Unlock()
				end := codec.NewRequest(codec.RequestEndTransaction, 0, nil, nil)
				codec.EndTransactionRequestHeader{Topic: h.Topic, ProducerGroup: txnGroup, TranStateTableOffset: h.TranStateTableOffset,
					CommitLogOffset: h.CommitLogOffset, CommitOrRollback: decide(h.MsgID), FromTransactionCheck: true,
					MsgID: h.MsgID, TransactionID: h.TransactionID}.Encode(end)
				end.Flag |= codec.FlagOneway
				if c.InvokeOneway(end) == nil {
					a.answers.Add(1)
				}
			}
		}
	}()
	t.Cleanup(func() { close(stop); wg.Wait(); _ = c.Close() })
	hb := codec.NewRequest(codec.RequestHeartBeat, 0, nil, codec.EncodeHeartbeatData(&codec.HeartbeatData{
		ClientID: "127.0.0.1@crash-txn", ProducerDataSet: []codec.ProducerData{{GroupName: txnGroup}}}))
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if resp, err := c.Invoke(ctx, hb); err != nil || resp.Code != codec.Success {
		t.Fatalf("producer heartbeat: %v %v", resp, err)
	}
	return a
}

func (a *checkAnswerer) checks(key string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.checked[key]
}

// awaitNoHalves polls rocketmq_half_messages until it is 0 (bounded).
func awaitNoHalves(t *testing.T, maddr string, b *broker) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		v, err := metricValue(maddr, "rocketmq_half_messages")
		if err == nil && v == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("half messages still pending after %s: %v %v\n%s", waitFor, v, err, b.tail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// txnOutcome compares the topic's content with the decisions: every
// committed key exactly once, no rolled-back one.
func txnOutcome(t *testing.T, c *crashClient, sent map[int]halfSent, commit func(i int) bool) (committed int) {
	t.Helper()
	got := pullTopic(t, c, txnTopic)
	for i, h := range sent {
		n := 0
		if g := got[h.key]; g != nil {
			n = g.count
		}
		switch {
		case commit(i) && n != 1:
			t.Errorf("committed %s is %d times in %s, want once", h.key, n, txnTopic)
		case !commit(i) && n != 0:
			t.Errorf("rolled-back %s is %d times in %s", h.key, n, txnTopic)
		}
		if commit(i) {
			committed++
		}
	}
	if len(got) > committed {
		t.Errorf("%d keys in %s, %d committed", len(got), txnTopic, committed)
	}
	return committed
}

// keyIndex returns i of "prefix-i".
func keyIndex(key string) int {
	_, n, _ := strings.Cut(key, "-")
	i, err := strconv.Atoi(n)
	if err != nil {
		return -1
	}
	return i
}

// TestKill9HalfBeforeEnd: kill -9 right after the half SENDs answered
// SUCCESS, before any END_TRANSACTION. After the restart a third is
// committed with END_TRANSACTION built from the SEND replies (as a producer
// whose END was lost would retry it), and the rest reach a producer of the
// group as checks, which commits half of them and rolls the others back.
func TestKill9HalfBeforeEnd(t *testing.T) {
	bin := popshimBin(t)
	dir, logDir, addr, maddr := t.TempDir(), t.TempDir(), freeAddr(t), freeAddr(t)
	args := append([]string{"--metrics-listen", maddr}, txnFlags...)
	b := start(t, bin, dir, logDir, addr, 1, args...)
	c := dial(t, addr)
	createTopicNamed(c, txnTopic)
	const n = 300
	sent := sendHalves(t, c, "half", n)
	b.kill(t)

	b = start(t, bin, dir, logDir, addr, 2, args...)
	c = dial(t, addr)
	if v, err := metricValue(maddr, "rocketmq_half_messages"); err != nil || int(v) != len(sent) {
		t.Fatalf("after restart rocketmq_half_messages = %v (%v), want %d", v, err, len(sent))
	}
	commit := func(i int) bool { return i%3 != 2 }
	for i, h := range sent {
		if i%3 == 0 {
			if resp := c.call(endReq(h, codec.SysFlagTransactionCommit)); resp.Code != codec.Success {
				t.Fatalf("commit of %s after restart: %d %s", h.key, resp.Code, resp.Remark)
			}
		}
	}
	a := answerChecks(t, addr, func(key string) int32 {
		if commit(keyIndex(key)) {
			return codec.SysFlagTransactionCommit
		}
		return codec.SysFlagTransactionRollback
	})
	awaitNoHalves(t, maddr, b)
	committed := txnOutcome(t, c, sent, commit)
	unchecked := 0
	for i, h := range sent {
		if i%3 != 0 && a.checks(h.key) == 0 {
			unchecked++
		}
	}
	if unchecked > 0 {
		t.Errorf("%d halves decided without a check", unchecked)
	}
	t.Logf("%d halves answered SUCCESS, kill -9 before any END; after restart %d committed from the SEND replies, %d checks answered; %d committed in the topic once each, %d rolled back, none visible",
		len(sent), (len(sent)+2)/3, a.answers.Load(), committed, len(sent)-committed)
}

// TestKill9DuringCommits: kill -9 while thousands of END_TRANSACTION
// commits and rollbacks are being applied. After the restart the halves
// left are checked and decided as before; every committed message is in its
// topic exactly once (those whose END answered SUCCESS before the kill
// included), and no rolled-back one.
func TestKill9DuringCommits(t *testing.T) {
	bin := popshimBin(t)
	dir, logDir, addr, maddr := t.TempDir(), t.TempDir(), freeAddr(t), freeAddr(t)
	flags := []string{"--metrics-listen", maddr, "--transaction-timeout", "30s", "--transaction-check-interval", "200ms",
		"--transaction-check-max", "100000"}
	b := start(t, bin, dir, logDir, addr, 1, flags...)
	c := dial(t, addr)
	createTopicNamed(c, txnTopic)
	const n = 3000
	sent := sendHalves(t, c, "txn", n)
	commit := func(i int) bool { return i%4 != 0 }
	nCommit := 0
	for i := range sent {
		if commit(i) {
			nCommit++
		}
	}

	var endedOK sync.Map // key → decision answered SUCCESS before the kill
	work := make(chan halfSent)
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for h := range work {
				d := int32(codec.SysFlagTransactionRollback)
				if commit(h.i) {
					d = codec.SysFlagTransactionCommit
				}
				ctx, cancel := context.WithTimeout(context.Background(), waitFor)
				resp, err := c.c.Invoke(ctx, endReq(h, d))
				cancel()
				if err == nil && resp.Code == codec.Success {
					endedOK.Store(h.key, d)
				}
			}
		}()
	}
	go func() {
		for _, h := range sent {
			work <- h
		}
		close(work)
	}()
	var atKill float64
	deadline := time.Now().Add(waitFor)
	for {
		v, err := metricValue(maddr, "rocketmq_commit_messages_total")
		// Kill once about a quarter of the commits are applied.
		if err == nil && v >= float64(nCommit)/4 && v < float64(nCommit) {
			b.kill(t)
			atKill = v
			break
		}
		if err == nil && v >= float64(nCommit) {
			t.Fatalf("all %d commits applied between two scrapes: no kill during commits", nCommit)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no commit applied within %s (last scrape %v, %v)", waitFor, v, err)
		}
		time.Sleep(2 * time.Millisecond)
	}
	wg.Wait()
	okBefore := 0
	endedOK.Range(func(any, any) bool { okBefore++; return true })

	// The restarted broker checks the halves left 1 s after their store time.
	b = start(t, bin, dir, logDir, addr, 2, append([]string{"--metrics-listen", maddr}, txnFlags...)...)
	c = dial(t, addr)
	left, _ := metricValue(maddr, "rocketmq_half_messages")
	a := answerChecks(t, addr, func(key string) int32 {
		if commit(keyIndex(key)) {
			return codec.SysFlagTransactionCommit
		}
		return codec.SysFlagTransactionRollback
	})
	awaitNoHalves(t, maddr, b)
	committed := txnOutcome(t, c, sent, commit)
	t.Logf("%d halves; killed with rocketmq_commit_messages_total %.0f of %d commits, %d ENDs answered SUCCESS before the kill; after restart %.0f halves left, %d checks answered; %d committed messages in the topic once each, no rolled-back one",
		len(sent), atKill, nCommit, okBefore, left, a.answers.Load(), committed)
}
