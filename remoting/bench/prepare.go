package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/remoting"
)

// requestTimeout bounds one synchronous request of the prepare phase.
const requestTimeout = 10 * time.Second

// dialAll opens o.Conns clients to o.Addr. On error the ones opened are
// closed.
func dialAll(ctx context.Context, o *Options) ([]*remoting.Client, error) {
	out := make([]*remoting.Client, 0, o.Conns)
	for range o.Conns {
		c, err := remoting.DialContext(ctx, o.Addr, remoting.ClientOptions{Log: o.Log})
		if err != nil {
			closeAll(out)
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func closeAll(clients []*remoting.Client) {
	for _, c := range clients {
		_ = c.Close()
	}
}

// invoke sends req on c and waits for the reply (requestTimeout).
func invoke(ctx context.Context, c *remoting.Client, req *codec.Command) (*codec.Command, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	return c.Invoke(ctx, req)
}

// replyError describes a non-success reply.
func replyError(what string, resp *codec.Command) error {
	return fmt.Errorf("bench: %s: response code %d (%s)", what, resp.Code, resp.Remark)
}

// createTopic sends UPDATE_AND_CREATE_TOPIC for o.Topic.
func createTopic(ctx context.Context, c *remoting.Client, o *Options) error {
	resp, err := invoke(ctx, c, createTopicRequest(o.Topic, o.Queues))
	if err != nil {
		return fmt.Errorf("bench: create topic: %w", err)
	}
	if resp.Code != codec.Success {
		return replyError("create topic "+o.Topic, resp)
	}
	return nil
}

// produce sends n messages of o.BodySize bytes round-robin over the queues,
// pipelined on every client (o.Inflight each), retrying SYSTEM_BUSY and
// other failures for up to 5 rounds. It returns how many were stored.
func produce(ctx context.Context, clients []*remoting.Client, o *Options, n int) (int, error) {
	body := make([]byte, o.BodySize)
	for i := range body {
		body[i] = 'a' + byte(i%26)
	}
	var stored, seq atomic.Int64
	var lastErr atomic.Value
	for round := 0; round < 5 && int(stored.Load()) < n; round++ {
		want := int64(n) - stored.Load()
		var issued atomic.Int64
		s := newStream(clients, len(clients)*o.Inflight, 0)
		s.build = func(int) (*codec.Command, int, bool) {
			if issued.Add(1) > want {
				return nil, 0, false
			}
			q := seq.Add(1)
			return sendRequest("bench_producer", o.Topic, int32(q%int64(o.Queues)), o.Queues, q, body), 0, true
		}
		s.finish = func(_, _ int, _ int64, resp *codec.Command, err error) {
			switch {
			case err != nil:
				lastErr.Store(err)
			case resp.Code == codec.Success:
				stored.Add(1)
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
			return int(stored.Load()), ctx.Err()
		}
		if int(stored.Load()) < n {
			time.Sleep(100 * time.Millisecond)
		}
	}
	if int(stored.Load()) < n {
		err, _ := lastErr.Load().(error)
		return int(stored.Load()), fmt.Errorf("bench: produced %d of %d messages: %w", stored.Load(), n, err)
	}
	return n, nil
}

// popAll pops o.Topic queue by queue (one POP in flight per queue,
// maxMsgNums 32, invisibleTime o.InvisibleTime) until n receipt handles are
// held or every queue answered "not found" three times in a row. The
// receipts come back grouped by queue in pop order.
func popAll(ctx context.Context, clients []*remoting.Client, o *Options, n int) ([]Receipt, error) {
	var mu sync.Mutex
	var got []Receipt
	var held atomic.Int64
	errs := make(chan error, o.Queues)
	var wg sync.WaitGroup
	for q := range o.Queues {
		wg.Add(1)
		go func(q int) {
			defer wg.Done()
			errs <- popQueue(ctx, clients[q%len(clients)], o, int32(q), n, &held, func(rs []Receipt) {
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
	if len(got) > n {
		got = got[:n]
	}
	return got, errors.Join(all...)
}

func popQueue(ctx context.Context, c *remoting.Client, o *Options, q int32, n int, held *atomic.Int64, keep func([]Receipt)) error {
	misses := 0
	var buf []Receipt
	for held.Load() < int64(n) && misses < 3 {
		if err := ctx.Err(); err != nil {
			return err
		}
		resp, err := invoke(ctx, c, popRequest(o.Group, o.Topic, q, 32, o.InvisibleTime, 0))
		if err != nil {
			return fmt.Errorf("bench: pop queue %d: %w", q, err)
		}
		switch resp.Code {
		case codec.Success:
			misses = 0
			buf, err = ReceiptsFromPop(buf[:0], resp, o.Topic, o.Group, o.BrokerName)
			if err != nil {
				return err
			}
			held.Add(int64(len(buf)))
			keep(append([]Receipt(nil), buf...))
		case codec.PullNotFound, codec.PollingTimeout:
			misses++
			time.Sleep(50 * time.Millisecond)
		case codec.SystemBusy, codec.FlowControl, codec.PollingFull:
			time.Sleep(10 * time.Millisecond)
		default:
			return replyError(fmt.Sprintf("pop queue %d", q), resp)
		}
	}
	return nil
}

// prepare creates the topic, produces o.Messages messages and pops them,
// returning the receipt handles and the prepare statistics.
func prepare(ctx context.Context, clients []*remoting.Client, o *Options) ([]Receipt, *PrepareStats, error) {
	t0 := time.Now()
	if o.CreateTopic {
		if err := createTopic(ctx, clients[0], o); err != nil {
			return nil, nil, err
		}
	}
	o.Log.Info().Int("messages", o.Messages).Str("topic", o.Topic).Msg("producing")
	produced, err := produce(ctx, clients, o, o.Messages)
	if err != nil {
		return nil, nil, err
	}
	o.Log.Info().Int("produced", produced).Msg("popping")
	rs, err := popAll(ctx, clients, o, produced)
	st := &PrepareStats{Produced: produced, Receipts: len(rs), Seconds: time.Since(t0).Seconds()}
	if err != nil {
		return rs, st, err
	}
	if len(rs) == 0 {
		return nil, st, errors.New("bench: prepare: POP returned no messages")
	}
	return rs, st, nil
}
