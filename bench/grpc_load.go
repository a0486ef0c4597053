package bench

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"github.com/rs/zerolog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/popshim/popshim/codec"
)

// loadStep is what one unit of a grpcLoad slot's work asks for next.
type loadStep int

const (
	stepNext      loadStep = iota // go on
	stepExhausted                 // the input ran out: the slot ends
	stepPause                     // a transport error: pause transportPause, then go on
)

// transportPause keeps a slot whose calls fail at the transport (a server
// gone, a connection being re-dialled) from spinning.
const transportPause = 100 * time.Millisecond

// grpcLoad is the main load of a gRPC mode: slots goroutines, each doing
// one synchronous unit of work (a SendMessage; a ReceiveMessage and its
// AckMessages) after another. Open loop at max (rate 0): a slot starts its
// next unit as soon as the last one ends. With a rate, unit i is due at
// begin + i/rate, taken by whichever slot is free, and its latency counts
// from that due time, so a slow server cannot hide queueing.
type grpcLoad struct {
	slots int
	rate  int
	// unit does slot's next unit of work; t0 (monoNanos) is when its
	// latency starts. Called on the slot's goroutine.
	unit func(slot int, t0 int64) loadStep
	// onStop, when set, runs once when the load is stopped (the receive
	// mode ends its long polls there).
	onStop func()

	stopped   atomic.Bool
	exhausted atomic.Bool
	stopCh    chan struct{}
	stopOnce  sync.Once
	wg        sync.WaitGroup
	done      chan struct{}
	seq       atomic.Int64
	begin     time.Time
}

func newGRPCLoad(slots, rate int, unit func(int, int64) loadStep) *grpcLoad {
	return &grpcLoad{slots: slots, rate: rate, unit: unit, stopCh: make(chan struct{}), done: make(chan struct{})}
}

func (l *grpcLoad) start() {
	l.begin = time.Now()
	l.wg.Add(l.slots)
	for i := range l.slots {
		go l.run(i)
	}
	go func() {
		l.wg.Wait()
		close(l.done)
	}()
}

func (l *grpcLoad) run(slot int) {
	defer l.wg.Done()
	per := 0.0
	if l.rate > 0 {
		per = float64(time.Second) / float64(l.rate)
	}
	for !l.stopped.Load() {
		t0 := monoNanos()
		if l.rate > 0 {
			due := l.begin.Add(time.Duration(float64(l.seq.Add(1)-1) * per))
			if !l.sleepUntil(due) {
				return
			}
			t0 = monoOf(due)
		}
		switch l.unit(slot, t0) {
		case stepExhausted:
			l.exhausted.Store(true)
			return
		case stepPause:
			if !l.sleepUntil(time.Now().Add(transportPause)) {
				return
			}
		}
	}
}

// sleepUntil waits for t; false when the load was stopped meanwhile.
func (l *grpcLoad) sleepUntil(t time.Time) bool {
	d := time.Until(t)
	if d <= 50*time.Microsecond {
		return true
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-l.stopCh:
		return false
	}
}

func (l *grpcLoad) stop() {
	l.stopOnce.Do(func() {
		l.stopped.Store(true)
		close(l.stopCh)
		if l.onStop != nil {
			l.onStop()
		}
	})
}

func (l *grpcLoad) finished() <-chan struct{} { return l.done }

func (l *grpcLoad) ranOut() bool { return l.exhausted.Load() }

func (l *grpcLoad) wait(timeout time.Duration) bool {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-l.done:
		return true
	case <-t.C:
		return false
	}
}

// outcome is how a gRPC call is counted: codec.Success for status OK,
// codec.SystemBusy for TOO_MANY_REQUESTS (the v5 form of SYSTEM_BUSY),
// the v2 code's number for any other status, codeTransport for a gRPC
// error. cancelled is true for a call cut short by the bench itself
// (context cancelled while stopping), which is counted nowhere.
func outcome(err error, st *v2.Status) (code int32, cancelled bool) {
	if err != nil {
		if errors.Is(err, context.Canceled) || status.Code(err) == codes.Canceled {
			return codeTransport, true
		}
		return codeTransport, false
	}
	switch c := st.GetCode(); {
	case st == nil:
		return int32(v2.Code_INTERNAL_SERVER_ERROR), false
	case c == v2.Code_OK:
		return codec.Success, false
	case c == v2.Code_TOO_MANY_REQUESTS:
		return codec.SystemBusy, false
	default:
		return int32(c), false
	}
}

// errorLog logs the first few failed calls of a run with their reason, so
// a run full of errors says why. Any goroutine.
type errorLog struct {
	log  *zerolog.Logger
	left atomic.Int32
}

func newErrorLog(log *zerolog.Logger) *errorLog {
	e := &errorLog{log: log}
	e.left.Store(5)
	return e
}

// note logs what failed (err, else st) while the budget lasts.
func (e *errorLog) note(what string, err error, st *v2.Status) {
	if e.left.Add(-1) < 0 {
		return
	}
	ev := e.log.Warn().Str("rpc", what)
	if err != nil {
		ev = ev.Err(err)
	} else {
		ev = ev.Str("status", st.GetCode().String()).Str("message", st.GetMessage())
	}
	ev.Msg("call failed")
}
