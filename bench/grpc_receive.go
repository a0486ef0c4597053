package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/popshim/popshim/codec"
)

// Series of the receive mode: "receive" per ReceiveMessage call (its
// latency runs to the end of the stream; an answer without messages is
// "empty"), "ack" per AckMessage call, "acked" per message acked (its
// latency runs from the start of the receive that brought it to the reply
// of its ack: one consume cycle).
const (
	sReceive = iota
	sAck
	sAcked
)

// grpcPrepareStall ends the preparation when this many SendMessage calls
// in a row failed.
const grpcPrepareStall = 200

// RunGRPCReceive measures the SimpleConsumer cycle over v5: o.Messages
// messages are sent first (SendMessage, o.ProduceBatch per call, by
// o.Conns producers); then o.Conns simple consumers (one connection and
// x-mq-client-id each, Settings, Heartbeat) run o.Inflight slots each, a
// slot doing ReceiveMessage (batch_size, invisible_duration,
// long_polling_timeout; the queue from the route, round-robin) and then
// AckMessage for what it got, in calls of at most o.GRPC.AckBatch entries
// sent at once, then the next receive. The run ends at o.Duration or
// when every sent message was acked. Series as sReceive, sAck, sAcked;
// the main one (bench compare) is "acked". Errors as RunGRPCSend, and a
// preparation that stored fewer than o.Messages.
func RunGRPCReceive(ctx context.Context, o Options) (*Report, error) {
	if err := startGRPC(ctx, &o, "grpc-receive"); err != nil {
		return nil, err
	}
	t0 := time.Now()
	sent, err := grpcProduce(ctx, &o)
	if err != nil {
		return nil, err
	}
	prep := &PrepareStats{Produced: sent, Seconds: time.Since(t0).Seconds()}
	poll := o.GRPC.LongPolling
	conns, err := dialHandshaken(ctx, &o, o.Topic, func(a *v2.Endpoints) *v2.Settings {
		return consumerSettings(a, o.Group, o.Topic, poll)
	})
	if err != nil {
		return nil, err
	}
	defer closeV5(conns)
	if prep.SettleSeconds, prep.Settled, err = settle(ctx, &o); err != nil {
		return nil, err
	}
	p := newPhase(&o, "grpc-receive", len(conns), []string{"receive", "ack", "acked"})
	cy := &receiveCycle{o: &o, conns: conns, p: p, target: int64(sent), errs: newErrorLog(o.Log)}
	cy.recvCtx, cy.cancelRecv = context.WithCancel(context.Background())
	defer cy.cancelRecv()
	load := newGRPCLoad(len(conns)*o.Inflight, o.Rate, cy.unit)
	load.onStop = cy.cancelRecv
	seconds, exhausted, runErr := p.measure(ctx, load)
	r := p.report(seconds, exhausted, "", "ack")
	r.Config = o.grpcConfig()
	r.Prepare = prep
	if err := finishReport(&o, r); err != nil {
		return r, err
	}
	return r, runErr
}

// receiveCycle is the state the slots of a receive run share.
type receiveCycle struct {
	o          *Options
	conns      []*v5Conn
	p          *phase
	target     int64 // messages sent: the run has nothing left once acked reaches it
	acked      atomic.Int64
	errs       *errorLog
	recvCtx    context.Context // parent of every ReceiveMessage; cancelled to end the long polls
	cancelRecv context.CancelFunc
}

// unit is one receive and its acks on slot's connection.
func (cy *receiveCycle) unit(slot int, t0 int64) loadStep {
	if cy.acked.Load() >= cy.target {
		return stepExhausted
	}
	sh := slot % len(cy.conns)
	c := cy.conns[sh]
	q := c.queues[(slot/len(cy.conns))%len(c.queues)]
	msgs, st, err := cy.receive(c, q)
	us := (monoNanos() - t0) / 1e3
	code, cancelled := outcome(err, st)
	switch {
	case cancelled:
		return stepNext
	case code == codec.Success && len(msgs) > 0:
		cy.p.rec.ok(sh, sReceive, us)
	case code == codec.Success || st.GetCode() == v2.Code_MESSAGE_NOT_FOUND:
		cy.p.rec.empty(sh, sReceive)
		return stepNext
	default:
		cy.p.rec.fail(sh, sReceive, code)
		cy.errs.note("ReceiveMessage", err, st)
		if err != nil {
			return stepPause
		}
		return stepNext
	}
	cy.ackAll(sh, c, msgs, t0)
	if cy.acked.Load() >= cy.target {
		cy.cancelRecv() // nothing is left: end the other slots' long polls
		return stepExhausted
	}
	return stepNext
}

// receive runs one ReceiveMessage and reads its stream to the end: the
// messages and the last status (the clients' rule).
func (cy *receiveCycle) receive(c *v5Conn, q *v2.MessageQueue) ([]*v2.Message, *v2.Status, error) {
	g := &cy.o.GRPC
	ctx, cancel := c.callOn(cy.recvCtx, g.LongPolling+receiveSlack)
	defer cancel()
	stream, err := c.svc.ReceiveMessage(ctx, &v2.ReceiveMessageRequest{
		Group: c.group, MessageQueue: q, FilterExpression: &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: "*"},
		BatchSize: int32(g.ReceiveBatch), InvisibleDuration: durationpb.New(cy.o.InvisibleTime),
		LongPollingTimeout: durationpb.New(g.LongPolling),
	})
	if err != nil {
		return nil, nil, err
	}
	var msgs []*v2.Message
	var st *v2.Status
	for {
		r, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return msgs, st, nil
		}
		if err != nil {
			return msgs, nil, err
		}
		switch x := r.GetContent().(type) {
		case *v2.ReceiveMessageResponse_Status:
			st = x.Status
		case *v2.ReceiveMessageResponse_Message:
			msgs = append(msgs, x.Message)
		}
	}
}

// ackAll acks msgs in AckMessage calls of at most AckBatch entries, all
// in flight at once, and returns when every one has answered. t0 is the
// start of the receive, for the "acked" latency.
func (cy *receiveCycle) ackAll(sh int, c *v5Conn, msgs []*v2.Message, t0 int64) {
	n := cy.o.GRPC.AckBatch
	if len(msgs) <= n {
		cy.ack(sh, c, msgs, t0)
		return
	}
	var wg sync.WaitGroup
	for i := 0; i < len(msgs); i += n {
		part := msgs[i:min(i+n, len(msgs))]
		wg.Go(func() { cy.ack(sh, c, part, t0) })
	}
	wg.Wait()
}

// ack sends one AckMessage for msgs (all of one topic: the bench topic)
// and records it: "ack" once, "acked" per entry that succeeded (status OK
// for all, or each entry's own status under MULTIPLE_RESULTS).
func (cy *receiveCycle) ack(sh int, c *v5Conn, msgs []*v2.Message, t0 int64) {
	req := &v2.AckMessageRequest{Group: c.group, Topic: msgs[0].GetTopic(), Entries: make([]*v2.AckMessageEntry, len(msgs))}
	for i, m := range msgs {
		req.Entries[i] = &v2.AckMessageEntry{MessageId: m.GetSystemProperties().GetMessageId(),
			ReceiptHandle: m.GetSystemProperties().GetReceiptHandle()}
	}
	start := monoNanos()
	ctx, cancel := c.call(unaryTimeout)
	resp, err := c.svc.AckMessage(ctx, req)
	cancel()
	now := monoNanos()
	st := resp.GetStatus()
	code, _ := outcome(err, st)
	if code != codec.Success && st.GetCode() != v2.Code_MULTIPLE_RESULTS {
		cy.p.rec.fail(sh, sAck, code)
		cy.errs.note("AckMessage", err, st)
		for range msgs {
			cy.p.rec.fail(sh, sAcked, code)
		}
		return
	}
	cy.p.rec.ok(sh, sAck, (now-start)/1e3)
	ok := int64(0)
	for i := range msgs {
		ec := codec.Success
		if st.GetCode() == v2.Code_MULTIPLE_RESULTS {
			if i >= len(resp.GetEntries()) {
				ec = int32(v2.Code_INTERNAL_SERVER_ERROR)
			} else {
				ec, _ = outcome(nil, resp.GetEntries()[i].GetStatus())
			}
		}
		if ec == codec.Success {
			cy.p.rec.ok(sh, sAcked, (now-t0)/1e3)
			ok++
		} else {
			cy.p.rec.fail(sh, sAcked, ec)
		}
	}
	cy.acked.Add(ok)
}

// grpcProduce sends o.Messages messages to o.Topic over v5 before a
// receive run: o.Conns producers (handshake included) × o.Inflight
// callers, o.ProduceBatch messages per SendMessage; a failed call's
// messages are sent again. It returns the count stored (status OK); an
// error when grpcPrepareStall calls in a row failed, or the handshake or
// ctx did. The producers are closed before it returns.
func grpcProduce(ctx context.Context, o *Options) (int, error) {
	conns, err := dialHandshaken(ctx, o, o.Topic, func(a *v2.Endpoints) *v2.Settings { return producerSettings(a, o.Topic) })
	if err != nil {
		return 0, err
	}
	defer closeV5(conns)
	body, host, ids := benchBody(o.BodySize), hostName(), newMsgIDs()
	var claimed, stored, failedInRow atomic.Int64
	var lastErr lastError
	var wg sync.WaitGroup
	for slot := range len(conns) * o.Inflight {
		c := conns[slot%len(conns)]
		wg.Go(func() {
			batch := make([]*v2.Message, 0, o.ProduceBatch)
			for range o.ProduceBatch {
				batch = append(batch, newV5Message(o.Topic, body, host))
			}
			for ctx.Err() == nil && failedInRow.Load() < grpcPrepareStall {
				k := int64(o.ProduceBatch)
				end := claimed.Add(k)
				if end-k >= int64(o.Messages) {
					return
				}
				k = min(k, int64(o.Messages)-(end-k))
				req := &v2.SendMessageRequest{Messages: batch[:k]}
				for _, m := range req.Messages {
					stamp(m, ids)
				}
				cctx, cancel := c.callOn(ctx, unaryTimeout)
				resp, err := c.svc.SendMessage(cctx, req)
				cancel()
				if err == nil {
					err = checkStatus("SendMessage", resp.GetStatus())
				}
				if err != nil {
					lastErr.Store(err)
					failedInRow.Add(1)
					claimed.Add(-k) // sent again by whichever caller claims next
					continue
				}
				failedInRow.Store(0)
				stored.Add(k)
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return int(stored.Load()), err
	}
	if n := stored.Load(); n < int64(o.Messages) {
		e := lastErr.Load()
		return int(n), fmt.Errorf("bench: sent %d of %d messages over gRPC: %w", n, o.Messages, e)
	}
	return o.Messages, nil
}
