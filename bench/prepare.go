package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// requestTimeout bounds one synchronous request of the prepare phase.
const requestTimeout = 10 * time.Second

// dialAll opens o.Conns clients to o.Addr. On error the ones opened are
// closed.
func dialAll(ctx context.Context, o *Options) ([]*client.Conn, error) {
	out := make([]*client.Conn, 0, o.Conns)
	for range o.Conns {
		c, err := client.DialContext(ctx, o.Addr, o.clientOptions())
		if err != nil {
			closeAll(out)
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func closeAll(clients []*client.Conn) {
	for _, c := range clients {
		_ = c.Close()
	}
}

// invoke sends req on c and waits for the reply (requestTimeout).
func invoke(ctx context.Context, c *client.Conn, req *codec.Command) (*codec.Command, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	return c.Invoke(ctx, req)
}

// replyError describes a non-success reply.
func replyError(what string, resp *codec.Command) error {
	return fmt.Errorf("bench: %s: response code %d (%s)", what, resp.Code, resp.Remark)
}

// createTopic sends UPDATE_AND_CREATE_TOPIC for o.Topic.
func createTopic(ctx context.Context, c *client.Conn, o *Options) error {
	resp, err := invoke(ctx, c, createTopicRequest(o.Topic, o.Queues))
	if err != nil {
		return fmt.Errorf("bench: create topic: %w", err)
	}
	if resp.Code != codec.Success {
		return replyError("create topic "+o.Topic, resp)
	}
	return nil
}

// produced counts the messages stored per queue.
type produced struct {
	perQueue []atomic.Int64
	total    atomic.Int64
}

// produce sends n messages of o.BodySize bytes round-robin over the queues,
// in SEND_BATCH_MESSAGE requests of o.ProduceBatch messages (SEND_MESSAGE_V2
// when 1), pipelined on every client (o.Inflight each), in rounds: each
// round resends what is still missing after SYSTEM_BUSY (a broker shedding
// SENDs that waited too long, as popshim's --wait-time-mills-in-send-queue
// and Java's waitTimeMillsInSendQueue do) and other failures; it gives up
// after 5 rounds in a row that stored nothing. It returns how many were
// stored in each queue (by the queueId of the SEND response).
func produce(ctx context.Context, clients []*client.Conn, o *Options, n int) (*produced, error) {
	per := max(o.ProduceBatch, 1)
	body := bodies(o)
	st := &produced{perQueue: make([]atomic.Int64, o.Queues)}
	var seq atomic.Int64
	var lastErr lastError
	for stalled := 0; stalled < 5 && int(st.total.Load()) < n; {
		before := st.total.Load()
		want := int64(n) - before
		var issued atomic.Int64
		s := newStream(clients, len(clients)*o.Inflight, 0)
		s.build = func(int) (*codec.Command, int, bool) {
			k := int64(per)
			end := issued.Add(k)
			if end-k >= want {
				return nil, 0, false
			}
			k = min(k, want-(end-k))
			q := seq.Add(1)
			if k == 1 {
				return sendRequest("bench_producer", o.Topic, int32(q%int64(o.Queues)), o.Queues, q, body(q), ""), 1, true
			}
			return sendBatchRequest("bench_producer", o.Topic, int32(q%int64(o.Queues)), o.Queues, q, int(k), body(q)), int(k), true
		}
		s.finish = func(_, k int, _ int64, resp *codec.Command, err error) {
			switch {
			case err != nil:
				lastErr.Store(err)
			case resp.Code == codec.Success:
				h, err := codec.DecodeSendMessageResponseHeader(resp.ExtFields)
				if err != nil || h.QueueID < 0 || int(h.QueueID) >= o.Queues {
					lastErr.Store(fmt.Errorf("bench: send response: bad queueId (%v)", err))
					return
				}
				st.perQueue[h.QueueID].Add(int64(k))
				st.total.Add(int64(k))
			default:
				lastErr.Store(replyError("send", resp))
			}
		}
		s.start()
		select {
		case <-s.done:
		case <-ctx.Done():
			s.stop()
			s.wait(drainTimeout)
			return st, ctx.Err()
		}
		if st.total.Load() == before {
			stalled++
		} else {
			stalled = 0
		}
		if int(st.total.Load()) < n {
			time.Sleep(100 * time.Millisecond)
		}
	}
	if int(st.total.Load()) < n {
		err := lastErr.Load()
		return st, fmt.Errorf("bench: produced %d of %d messages: %w", st.total.Load(), n, err)
	}
	return st, nil
}

// popPatience is how long a queue may answer "not found" without progress
// before popAll gives up on it: a Java broker makes messages visible to POP
// only after its asynchronous dispatch, which lags the SEND replies.
const popPatience = 5 * time.Second

// popAll pops o.Topic queue by queue (one POP in flight per queue,
// maxMsgNums 32, invisibleTime o.InvisibleTime) until each queue returned
// as many messages as were produced into it, or found nothing for
// popPatience. The receipts come back in arrival order.
func popAll(ctx context.Context, clients []*client.Conn, o *Options, prod *produced) ([]client.Receipt, error) {
	var mu sync.Mutex
	var got []client.Receipt
	errs := make(chan error, o.Queues)
	var wg sync.WaitGroup
	for q := range o.Queues {
		wg.Add(1)
		go func(q int) {
			defer wg.Done()
			errs <- popQueue(ctx, clients[q%len(clients)], o, int32(q), int(prod.perQueue[q].Load()), func(rs []client.Receipt) {
				mu.Lock()
				got = append(got, rs...)
				mu.Unlock()
			})
		}(q)
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		if err != nil {
			all = append(all, err)
		}
	}
	return got, errors.Join(all...)
}

func popQueue(ctx context.Context, c *client.Conn, o *Options, q int32, want int, keep func([]client.Receipt)) error {
	var buf []client.Receipt
	held := 0
	progress := time.Now()
	for held < want && time.Since(progress) < popPatience {
		if err := ctx.Err(); err != nil {
			return err
		}
		resp, err := invoke(ctx, c, popRequest(o.Group, o.Topic, q, 32, o.InvisibleTime, 0))
		if err != nil {
			return fmt.Errorf("bench: pop queue %d: %w", q, err)
		}
		switch resp.Code {
		case codec.Success:
			buf, err = client.ReceiptsFromPop(buf[:0], resp, o.Topic, o.Group, o.BrokerName)
			if err != nil {
				return err
			}
			held += len(buf)
			progress = time.Now()
			keep(append([]client.Receipt(nil), buf...))
		case codec.PullNotFound, codec.PollingTimeout:
			time.Sleep(20 * time.Millisecond)
		case codec.SystemBusy, codec.FlowControl, codec.PollingFull:
			time.Sleep(10 * time.Millisecond)
		default:
			return replyError(fmt.Sprintf("pop queue %d", q), resp)
		}
	}
	if held < want {
		o.Log.Warn().Int32("queueId", q).Int("held", held).Int("produced", want).Msg("queue stopped returning messages")
	}
	return nil
}

// prepare creates the topic, produces o.Messages messages and pops them,
// returning the receipt handles and the prepare statistics.
func prepare(ctx context.Context, clients []*client.Conn, o *Options) ([]client.Receipt, *PrepareStats, error) {
	t0 := time.Now()
	if o.CreateTopic {
		if err := createTopic(ctx, clients[0], o); err != nil {
			return nil, nil, err
		}
	}
	o.Log.Info().Int("messages", o.Messages).Str("topic", o.Topic).Msg("producing")
	prod, err := produce(ctx, clients, o, o.Messages)
	if err != nil {
		return nil, nil, err
	}
	o.Log.Info().Int64("produced", prod.total.Load()).Msg("popping")
	rs, err := popAll(ctx, clients, o, prod)
	st := &PrepareStats{Produced: int(prod.total.Load()), Receipts: len(rs), Seconds: time.Since(t0).Seconds()}
	if err != nil {
		return rs, st, err
	}
	if len(rs) == 0 {
		return nil, st, errors.New("bench: prepare: POP returned no messages")
	}
	return rs, st, nil
}
