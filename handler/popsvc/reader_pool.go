package popsvc

import (
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
type readerPool struct {
	fresh  chan func()
	reruns chan func()
	quit   chan struct{}
	wg     sync.WaitGroup
	once   sync.Once
}

// newReaderPool starts workers goroutines. queueLen bounds fresh requests,
// rerunLen bounds re-runs.
func newReaderPool(workers, queueLen, rerunLen int) *readerPool {
	p := &readerPool{
		fresh:  make(chan func(), queueLen),
		reruns: make(chan func(), rerunLen),
		quit:   make(chan struct{}),
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
			job()
			continue
		default:
		}
		select {
		case job := <-p.reruns:
			job()
		case job := <-p.fresh:
			job()
		case <-p.quit:
			return
		}
	}
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
