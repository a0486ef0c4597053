package bench

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// txnProducerGroup is the producer group (PGROUP) of the txn mode's halves.
const txnProducerGroup = "bench_txn_producer"

// txnPollTime is how long a visibility reader's PULL may be held.
const txnPollTime = time.Second

// RunTxn measures transactional produce as a remoting producer does it
// (DefaultMQProducerImpl.sendMessageInTransaction): each slot sends a half
// message (SEND_MESSAGE_V2 with TRAN_MSG and PGROUP, the prepared sysFlag)
// and, on its SUCCESS reply, END_TRANSACTION commit built from the reply
// (commitLogOffset from msgId, tranStateTableOffset = queueOffset), then its
// next half without waiting for the END, whose answer is recorded (not
// oneway, so that a refused commit counts as an error; a Java broker answers
// it as well). Up to o.Messages transactions, queues round-robin,
// o.BodySize bytes, for o.Duration.
//
// Visibility: one reader connection per queue long-polls PULL_MESSAGE
// (suspend txnPollTime, subscription "*") from offset 0 and, for each
// message, records the time from its END being sent to the PULL reply
// that carried it, on this process's monotonic clock.
//
// Series "half" (SEND round trip), "commit" (END round trip; its OK rate
// is the transactions per second), "visible" (END sent → pulled). Errors
// as RunAck.
func RunTxn(ctx context.Context, o Options) (*Report, error) {
	clients, err := start(ctx, &o, "txn")
	if err != nil {
		return nil, err
	}
	defer closeAll(clients)
	if o.CreateTopic {
		if err := createTopic(ctx, clients[0], &o); err != nil {
			return nil, err
		}
	}
	readers := make([]*client.Conn, 0, o.Queues)
	defer func() { closeAll(readers) }()
	for range o.Queues {
		c, err := client.DialContext(ctx, o.Addr, o.clientOptions())
		if err != nil {
			return nil, err
		}
		readers = append(readers, c)
	}
	const sHalf, sCommit, sVisible = 0, 1, 2
	p := newPhase(&o, "txn", len(clients), []string{"half", "commit", "visible"})
	endSent := make([]atomic.Int64, o.Messages+1) // monoNanos of each transaction's END, by seq
	body := make([]byte, o.BodySize)
	var seq atomic.Int64
	var ends sync.WaitGroup
	s := newStream(clients, len(clients)*o.Inflight, o.Rate)
	s.build = func(int) (*codec.Command, int, bool) {
		q := seq.Add(1)
		if q > int64(o.Messages) {
			return nil, 0, false
		}
		return halfRequest(o.Topic, int32(q%int64(o.Queues)), o.Queues, q, body), int(q), true
	}
	s.finish = func(sh, tag int, us int64, resp *codec.Command, err error) {
		if code := replyCode(resp, err); code != codec.Success {
			p.rec.fail(sh, sHalf, code)
			return
		}
		h, err := codec.DecodeSendMessageResponseHeader(resp.ExtFields)
		var phys int64
		if err == nil {
			_, phys, err = codec.DecodeOffsetMsgID(h.MsgID)
		}
		if err != nil {
			p.rec.fail(sh, sHalf, codec.SystemError)
			return
		}
		p.rec.ok(sh, sHalf, us)
		end := endRequest(o.Topic, h.QueueOffset, phys, int64(tag))
		t := monoNanos()
		endSent[tag].Store(t)
		ends.Add(1)
		if err := clients[sh].InvokeAsync(end, func(resp *codec.Command, err error) {
			recordReply(p, sh, sCommit, (monoNanos()-t)/1000, resp, err)
			ends.Done()
		}); err != nil {
			p.rec.fail(sh, sCommit, codeTransport)
			ends.Done()
		}
	}
	waitEnds := func(stop <-chan struct{}) {
		<-stop
		ends.Wait()
	}
	watch := func(stop <-chan struct{}) {
		var wg sync.WaitGroup
		for q, c := range readers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				pullVisible(ctx, c, &o, int32(q), stop, func(seq int64) {
					if seq > 0 && seq < int64(len(endSent)) {
						if t := endSent[seq].Load(); t > 0 {
							p.rec.ok(q, sVisible, (monoNanos()-t)/1000)
						}
					}
				})
			}()
		}
		wg.Wait()
	}
	seconds, exhausted, runErr := p.measure(ctx, s, waitEnds, watch)
	r := p.report(seconds, exhausted, "", "half", "commit")
	if err := finishReport(&o, r); err != nil {
		return r, err
	}
	return r, runErr
}

// halfRequest is the half message of transaction seq: a SEND_MESSAGE_V2 as
// sendRequest builds it, with TRAN_MSG=true, PGROUP and the prepared
// sysFlag, as TransactionMQProducer sends it.
func halfRequest(topic string, queueID int32, queues int, seq int64, body []byte) *codec.Command {
	c := sendRequest(txnProducerGroup, topic, queueID, queues, seq, body,
		codec.PropertyTransactionPrepared+"\x01true\x02"+codec.PropertyProducerGroup+"\x01"+txnProducerGroup+"\x02")
	c.ExtFields["f"] = strconv.Itoa(int(codec.SysFlagTransactionPrepared))
	return c
}

// endRequest is END_TRANSACTION commit of transaction seq, whose half's
// SEND reply gave queueOffset and (in msgId) commitLogOffset.
func endRequest(topic string, queueOffset, commitLogOffset, seq int64) *codec.Command {
	c := newRequest(codec.RequestEndTransaction)
	key := "bench" + strconv.FormatInt(seq, 16)
	codec.EndTransactionRequestHeader{Topic: topic, ProducerGroup: txnProducerGroup, TranStateTableOffset: queueOffset,
		CommitLogOffset: commitLogOffset, CommitOrRollback: codec.SysFlagTransactionCommit, MsgID: key, TransactionID: key}.Encode(c)
	return c
}

// pullVisible long-polls queue q of o.Topic from offset 0 until stop is
// closed and hands seen the transaction number of every message pulled
// (its UNIQ_KEY "bench<hex seq>"; 0 when it is not one).
func pullVisible(ctx context.Context, c *client.Conn, o *Options, q int32, stop <-chan struct{}, seen func(seq int64)) {
	var off int64
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		default:
		}
		req := newRequest(codec.RequestPullMessage)
		codec.PullMessageRequestHeader{ConsumerGroup: o.Group, Topic: o.Topic, QueueID: q, QueueOffset: off, MaxMsgNums: 32,
			SysFlag: codec.PullSysFlagSuspend | codec.PullSysFlagSubscription, SuspendTimeoutMillis: txnPollTime.Milliseconds(),
			Subscription: "*", ExpressionType: "TAG", BrokerName: o.BrokerName}.Encode(req)
		rctx, cancel := context.WithTimeout(ctx, txnPollTime+requestTimeout)
		resp, err := c.Invoke(rctx, req)
		cancel()
		if err != nil {
			return
		}
		h, herr := codec.DecodePullMessageResponseHeader(resp.ExtFields)
		if resp.Code == codec.Success {
			msgs, err := codec.DecodeMessages(resp.Body)
			if err != nil {
				return
			}
			for i := range msgs {
				key, _ := msgs[i].Property(codec.PropertyUniqClientMessageIDKeyIdx)
				n, err := strconv.ParseInt(strings.TrimPrefix(key, "bench"), 16, 64)
				if err != nil {
					n = 0
				}
				seen(n)
			}
		}
		if herr == nil && h.NextBeginOffset > off {
			off = h.NextBeginOffset
		}
	}
}
