package bench

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// stream issues one kind of request on slots spread over the connections:
// slot i uses connection i mod len(clients). Open loop at max (rate 0):
// every reply immediately issues the slot's next request from the client's
// reader goroutine. With a rate: a pacer goroutine schedules requests at
// fixed intervals, each taking a free slot (waiting for one when all are
// busy), and latency counts from the scheduled time.
type stream struct {
	clients []*client.Conn
	slots   int
	rate    int
	// build returns slot's next request and a tag handed back to finish;
	// ok=false when the stream's input is exhausted (ends the slot). Called
	// from any goroutine, concurrently for different slots.
	build func(slot int) (req *codec.Command, tag int, ok bool)
	// prepared, when set, is used instead of build: slot's next request as
	// a frame encoded in advance (codec.AppendPreparedFrame) and the offset
	// of its opaque, so issuing costs a copy instead of an encode.
	prepared func(slot int) (frame []byte, opaqueAt, tag int, ok bool)
	// finish gets every outcome: resp nil and err set on transport errors.
	// sh identifies the connection (a recorder shard). Any goroutine.
	finish func(sh, tag int, micros int64, resp *codec.Command, err error)
	// finishCode, when set together with prepared, replaces finish: it gets
	// each reply's response code only (codeTransport on transport errors),
	// and the requests go out by client.Conn.InvokePreparedHead, which
	// decodes only the head of the reply and allocates nothing per request.
	// For streams that check nothing but the code (the ACK stream).
	finishCode func(sh, tag int, micros int64, code int32)
	// calls holds each slot's in-flight request for finishCode streams,
	// reused from request to request (one in flight per slot).
	calls []slotCall

	stopped   atomic.Bool
	exhausted atomic.Bool
	stopCh    chan struct{}
	stopOnce  sync.Once
	wg        sync.WaitGroup // max mode: live slots; paced: pacer + requests in flight
	free      chan int
	done      chan struct{} // closed when wg reaches zero after stop or exhaustion
}

func newStream(clients []*client.Conn, slots, rate int) *stream {
	return &stream{clients: clients, slots: slots, rate: rate, stopCh: make(chan struct{}), done: make(chan struct{})}
}

// start issues the first requests (or starts the pacer). Call once.
func (s *stream) start() {
	if s.finishCode != nil {
		s.calls = make([]slotCall, s.slots)
		for i := range s.calls {
			s.calls[i] = slotCall{s: s, slot: i}
		}
	}
	if s.rate <= 0 {
		// The first requests go out from a goroutine of their own: a send
		// waits while the connection's queue is full, and a broker that
		// stopped reading (its read budget, large frames) must not keep
		// the caller from its deadline and signals; closing the
		// connections after the drain ends those waits.
		s.wg.Add(s.slots)
		go func() {
			for i := range s.slots {
				if !s.issue(i, startNow) {
					s.wg.Done()
				}
			}
		}()
	} else {
		s.free = make(chan int, s.slots)
		for i := range s.slots {
			s.free <- i
		}
		s.wg.Add(1)
		go s.pace()
	}
	go func() {
		s.wg.Wait()
		close(s.done)
	}()
}

// stop makes every slot end after its current request. Any goroutine.
func (s *stream) stop() {
	s.stopOnce.Do(func() {
		s.stopped.Store(true)
		close(s.stopCh)
	})
}

// issue sends the slot's next request; false when nothing was sent (stopped,
// exhausted or transport error), so the caller ends the slot. t0 is when
// the request's latency starts, in monoNanos: the scheduled time (paced),
// the completion time of the slot's previous reply (max mode, finishCode
// streams), or startNow.
func (s *stream) issue(slot int, t0 int64) bool {
	if s.stopped.Load() {
		return false
	}
	var (
		req      *codec.Command
		frame    []byte
		opaqueAt int
		tag      int
		ok       bool
	)
	if s.prepared != nil {
		frame, opaqueAt, tag, ok = s.prepared(slot)
	} else {
		req, tag, ok = s.build(slot)
	}
	if !ok {
		s.exhausted.Store(true)
		return false
	}
	ci := slot % len(s.clients)
	if t0 == startNow {
		t0 = monoNanos()
	}
	if s.finishCode != nil {
		c := &s.calls[slot]
		c.ci, c.tag, c.t0 = ci, tag, t0
		if err := s.clients[ci].InvokePreparedHead(frame, opaqueAt, c); err != nil {
			s.finishCode(ci, tag, 0, codeTransport)
			return false
		}
		return true
	}
	cb := func(resp *codec.Command, err error) {
		s.finish(ci, tag, (monoNanos()-t0)/1e3, resp, err)
		s.next(slot)
	}
	var err error
	if frame != nil {
		err = s.clients[ci].InvokePreparedAsync(frame, opaqueAt, cb)
	} else {
		err = s.clients[ci].InvokeAsync(req, cb)
	}
	if err != nil {
		s.finish(ci, tag, 0, nil, err)
		return false
	}
	return true
}

// next runs after a reply: re-issue (max mode) or free the slot (paced).
func (s *stream) next(slot int) {
	if s.rate <= 0 {
		if !s.issue(slot, startNow) {
			s.wg.Done()
		}
		return
	}
	s.free <- slot // capacity slots: never blocks
	s.wg.Done()
}

// slotCall is the request a slot of a finishCode stream has in flight: the
// client.HeadHandler of its reply. A slot has one request in flight at a
// time, and its fields are written before the request is registered with
// the client and read after the client took it back, so one slotCall per
// slot serves every request of the slot.
type slotCall struct {
	s    *stream
	slot int
	ci   int
	tag  int
	t0   int64 // monoNanos
}

// HandleHead takes one clock reading for both the reply's latency and, in
// max mode, the start of the slot's next request, which it issues before
// recording the reply so that recording is not counted in the next
// request's latency (issuing reads nothing of c's current request).
func (c *slotCall) HandleHead(h codec.ResponseHead, err error) {
	now := monoNanos()
	s, ci, tag := c.s, c.ci, c.tag
	micros := (now - c.t0) / 1e3
	code := h.Code
	if err != nil {
		code = codeTransport
	}
	if s.rate > 0 {
		s.finishCode(ci, tag, micros, code)
		s.free <- c.slot // capacity slots: never blocks
		s.wg.Done()
		return
	}
	live := s.issue(c.slot, now)
	s.finishCode(ci, tag, micros, code)
	if !live {
		s.wg.Done()
	}
}

// pace schedules requests at s.rate per second until stopped or exhausted.
func (s *stream) pace() {
	defer s.wg.Done()
	per := float64(time.Second) / float64(s.rate)
	begin := time.Now()
	for i := int64(0); ; i++ {
		due := begin.Add(time.Duration(float64(i) * per))
		if d := time.Until(due); d > 50*time.Microsecond {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-s.stopCh:
				t.Stop()
				return
			}
		}
		var slot int
		select {
		case slot = <-s.free:
		case <-s.stopCh:
			return
		}
		s.wg.Add(1)
		if !s.issue(slot, monoOf(due)) {
			s.free <- slot
			s.wg.Done()
			return
		}
	}
}

// finished is closed when every slot has ended.
func (s *stream) finished() <-chan struct{} { return s.done }

// ranOut reports whether build or prepared reported the input exhausted.
func (s *stream) ranOut() bool { return s.exhausted.Load() }

// wait blocks until every slot has ended or timeout passed; false on timeout.
func (s *stream) wait(timeout time.Duration) bool {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-s.done:
		return true
	case <-t.C:
		return false
	}
}
