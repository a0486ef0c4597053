package remoting

import (
	"context"
	"errors"
	"net"
	"syscall"
	"time"

	"github.com/panjf2000/gnet/v2"
	"golang.org/x/sys/unix"
)

// How connections are accepted (docs/DESIGN.md, Faults, "Out of file
// descriptors").
//
// gnet v2.9.7's own acceptor treats every accept(2) error other than
// EAGAIN, EINTR, ECONNRESET and ECONNABORTED as fatal: its main reactor
// returns errors.ErrAcceptSocket, the engine shuts down and every
// connection of the listener is closed. EMFILE (the process is out of file
// descriptors) is such an error, so a burst of connections past
// RLIMIT_NOFILE used to close the broker port for good while the process
// kept running. A Java broker (Netty) logs the error, backs off and goes
// on accepting.
//
// So gnet no longer listens. The Server owns a Go net.Listener and one
// goroutine (acceptLoop) that accepts; each accepted connection is handed
// to a gnet engine that has no listener of its own (gnet.Client, the same
// event loops, options and EventHandler callbacks as before) with
// Client.EnrollContext, which duplicates the descriptor, registers the
// duplicate with the event loop holding the fewest connections (gnet.Client
// balances by connection count whatever WithLoadBalancing says), runs
// OnOpen there, and closes the Go side. From OnOpen on, a connection is an ordinary gnet connection:
// OnTraffic, OnClose (still before gnet closes the descriptor), OnTick,
// AsyncWritev, read pauses and TLS hand-off are unchanged.
//
// An accept that fails (EMFILE, ENFILE, ENOBUFS, ENOMEM, ...), or cannot
// start because no spare descriptor is left (acceptOne), or an enrollment
// that fails, is counted in
// popshim_remoting_accept_errors_total{server,reason}, logged at most
// acceptLogBurst lines per second, and followed by a pause that starts at
// acceptMinDelay and doubles up to acceptMaxDelay, as net/http's Serve
// does; the first success resets it and logs that accepting resumed.
// Connections waiting meanwhile stay in the kernel's accept queue. The
// event loops never wait on the acceptor, so open connections are served
// throughout.

// Accept back-off bounds.
const (
	acceptMinDelay = 5 * time.Millisecond
	acceptMaxDelay = time.Second
)

// acceptLogBurst is how many accept-error lines are logged per second.
const acceptLogBurst = 5

// nextAcceptDelay returns the pause after an accept error that followed a
// pause of prev (0 after a success): acceptMinDelay, then double the
// previous one, at most acceptMaxDelay.
func nextAcceptDelay(prev time.Duration) time.Duration {
	if prev <= 0 {
		return acceptMinDelay
	}
	return min(2*prev, acceptMaxDelay)
}

// acceptErrReason is the reason label of an accept or enrollment error:
// the lower-case errno name for the errors that mean a shortage of
// descriptors or kernel memory, "other" for anything else (the label set
// stays bounded).
func acceptErrReason(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		switch errno {
		case unix.EMFILE:
			return "emfile"
		case unix.ENFILE:
			return "enfile"
		case unix.ENOBUFS:
			return "enobufs"
		case unix.ENOMEM:
			return "enomem"
		}
	}
	return "other"
}

// listen binds the listen address with SO_REUSEADDR (set explicitly, as
// Netty-based brokers set it: a restarted popshim must rebind its port
// while old connections sit in TIME-WAIT) and without TCP keep-alive on
// accepted connections (a Java broker's SO_KEEPALIVE is false; gnet's
// listener set none either). Go sets TCP_NODELAY on every accepted
// connection, and the enrolled duplicate shares the socket.
func (s *Server) listen() (net.Listener, error) {
	lc := net.ListenConfig{
		KeepAlive: -1,
		Control: func(_, _ string, rc syscall.RawConn) error {
			var serr error
			if err := rc.Control(func(fd uintptr) {
				serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
			}); err != nil {
				return err
			}
			return serr
		},
	}
	return lc.Listen(context.Background(), "tcp", s.opts.Addr)
}

// acceptLoop accepts connections on ln and enrolls them into cli's event
// loops until ln is closed (Stop). It is the only goroutine that calls
// Accept; it closes s.acceptDone when it returns.
func (s *Server) acceptLoop(ln net.Listener, cli *gnet.Client) {
	defer close(s.acceptDone)
	var (
		delay      time.Duration
		failures   int
		firstError time.Time
	)
	for {
		stage, err := acceptOne(ln, cli)
		if errors.Is(err, net.ErrClosed) && stage == "accept" {
			return
		}
		if err == nil {
			if failures > 0 {
				s.log.Info().Int("errors", failures).Dur("after", time.Since(firstError)).
					Msg("accepting connections again")
				failures = 0
			}
			delay = 0
			continue
		}
		if failures == 0 {
			firstError = time.Now()
		}
		failures++
		delay = nextAcceptDelay(delay)
		if s.opts.acceptPause > 0 {
			delay = s.opts.acceptPause
		}
		reason := acceptErrReason(err)
		s.acceptErrors.Add(1)
		s.opts.Metrics.acceptError(s.opts.Name, reason)
		s.acceptLog.Warn().Err(err).Str("stage", stage).Str("reason", reason).Dur("retry_in", delay).
			Msg("cannot accept a connection; open connections are still served")
		t := time.NewTimer(delay)
		select {
		case <-s.stopAccept:
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// acceptOne takes one connection from ln's queue and enrolls it into cli.
// A connection needs two descriptors for a moment (the accepted one and
// gnet's duplicate, after which the first is closed), so a spare
// descriptor is opened before accepting and closed just before the
// enrollment duplicates: when the process has one descriptor left, the
// spare fails and the connection stays queued in the kernel, instead of
// being accepted into the last descriptor and closed because the
// duplicate failed. (Another goroutine may still take the freed number
// in between; then the enrollment fails and that one connection is
// closed.) It returns the stage that failed ("spare", "accept", "enroll")
// and its error, or nil when OnOpen ran for the connection.
func acceptOne(ln net.Listener, cli *gnet.Client) (string, error) {
	spare, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "spare", err
	}
	nc, err := ln.Accept()
	_ = unix.Close(spare) // its number is free for the duplicate now
	if err != nil {
		return "accept", err
	}
	// EnrollContext closes nc whatever happens; on success OnOpen has
	// run on the chosen event loop.
	if _, err := cli.EnrollContext(nc, nil); err != nil {
		return "enroll", err
	}
	return "", nil
}

// shutdown stops accepting, then stops the event loops (every connection
// is closed, OnClose running for each, after its outbound bytes were
// flushed), records the result in s.runErr and closes s.done. It runs once,
// on its own goroutine, started by the first Stop; it does nothing when
// Start failed (s.done is closed already).
func (s *Server) shutdown() {
	s.startMu.Lock()
	ln, cli := s.ln, s.cli
	s.startMu.Unlock()
	if cli == nil {
		return
	}
	close(s.stopAccept)
	_ = ln.Close() // the accept loop sees net.ErrClosed
	<-s.acceptDone
	s.runErr = cli.Stop()
	s.log.Info().Msg("remoting server stopped") // before done: a test's logger ends with its Stop
	close(s.done)
}
