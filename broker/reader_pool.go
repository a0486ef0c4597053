package broker

import (
	"runtime/debug"
	"sync"
)

// readerPool runs the store reads of POP, PULL, NOTIFICATION and
// CONSUMER_SEND_MSG_BACK on a few goroutines, never on the gnet event loop
// and never on the batch writer (the AutoMQ "fast/slow isolation": a slow
// read cannot hold a thread an ACK needs).
//
// Two bounded queues feed the workers: fresh requests from the event loop
// (submit; full means SYSTEM_BUSY at once) and re-runs of parked or
// contended requests (resubmit; sized so that every parked poll can be
// re-run at the same time, since a request is parked, queued or running,
// never two at once).
//
// A job that panics is recovered by its worker (run), which reports it to
// onPanic and goes on with the next job, so one bad request can neither
// kill the process nor shrink the pool. Jobs that hold resources (the POP
// job's queue locks) release them and answer on their own deferred path
// (PopJob.Run); this is the backstop for the others.
type readerPool struct {
	fresh   chan func()
	reruns  chan func()
	quit    chan struct{}
	wg      sync.WaitGroup
	once    sync.Once
	onPanic func(v any, stack []byte) // a recovered job panic; must not block
}

// newReaderPool starts workers goroutines. queueLen bounds fresh requests,
// rerunLen bounds re-runs; onPanic is told every recovered job panic, with
// the stack (required).
func newReaderPool(workers, queueLen, rerunLen int, onPanic func(v any, stack []byte)) *readerPool {
	p := &readerPool{
		fresh:   make(chan func(), queueLen),
		reruns:  make(chan func(), rerunLen),
		quit:    make(chan struct{}),
		onPanic: onPanic,
	}
	p.wg.Add(workers)
	for range workers {
		go p.work()
	}
	return p
}

func (p *readerPool) work() {
	defer p.wg.Done()
	for {
		// Re-runs first: they are older requests.
		select {
		case job := <-p.reruns:
			p.run(job)
			continue
		default:
		}
		select {
		case job := <-p.reruns:
			p.run(job)
		case job := <-p.fresh:
			p.run(job)
		case <-p.quit:
			return
		}
	}
}

// run runs one job on the calling worker, recovering a panic.
func (p *readerPool) run(job func()) {
	defer func() {
		if v := recover(); v != nil {
			p.onPanic(v, debug.Stack())
		}
	}()
	job()
}

// submit queues a fresh request without blocking; false means the pool is
// full (answer SYSTEM_BUSY) or closed.
func (p *readerPool) submit(job func()) bool {
	select {
	case <-p.quit:
		return false
	default:
	}
	select {
	case p.fresh <- job:
		return true
	default:
		return false
	}
}

// resubmit queues a re-run without blocking; false means the re-run queue
// is full or the pool closed (the caller answers SYSTEM_BUSY).
func (p *readerPool) resubmit(job func()) bool {
	select {
	case <-p.quit:
		return false
	default:
	}
	select {
	case p.reruns <- job:
		return true
	default:
		return false
	}
}

// close stops the workers after their current job and waits for them.
// Queued jobs are dropped (their connections are closing with the broker).
func (p *readerPool) close() {
	p.once.Do(func() { close(p.quit) })
	p.wg.Wait()
}
