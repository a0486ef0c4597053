package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/popshim/popshim/codec"
)

// Options configures a Conn. Zero fields take the documented default.
type Options struct {
	// MaxFrameBytes bounds incoming frames, length prefix included; a larger
	// one closes the client. Default codec.DefaultMaxFrame (16 MiB).
	MaxFrameBytes int
	// DialTimeout bounds the TCP connect. Default 3 s.
	DialTimeout time.Duration
	// MaxQueuedBytes bounds encoded requests waiting for the writer
	// goroutine; Invoke* blocks while the queue is fuller. Default 8 MiB.
	MaxQueuedBytes int
	// OnRequest answers requests the server sends to the client (e.g.
	// NOTIFY_CONSUMER_IDS_CHANGED). It runs on the reader goroutine and must
	// not block; a nil result sends nothing. When OnRequest is nil, requests
	// that are not oneway get REQUEST_CODE_NOT_SUPPORTED.
	OnRequest func(req *codec.Command) *codec.Command
	// Log receives connection-level events. Default: disabled.
	Log *zerolog.Logger
	// TLS, when set, makes the client speak TLS: DialContext runs the
	// handshake (bounded by DialTimeout) before it returns. Without
	// ServerName (and unless InsecureSkipVerify) the certificate is
	// verified against the dialled host, as tls.Dial does. Nil means
	// plaintext.
	TLS *tls.Config
	// BeforeRequest, when set, may change every request just before it is
	// encoded (Invoke, InvokeAsync, InvokeOneway), as a Java client's
	// RPCHook.doBeforeRequest: e.g. add AccessKey and Signature. It runs on
	// the caller's goroutine. Frames given to InvokePrepared* are sent as
	// they are.
	BeforeRequest func(req *codec.Command)
}

// Callback receives the response of an InvokeAsync call, or a nil response
// and the error that closed the client (net.ErrClosed after Close). It is
// called exactly once, on the client's reader goroutine or on the goroutine
// that closed the client, and must not block.
type Callback func(resp *codec.Command, err error)

// Conn is a remoting client over one TCP connection: a writer goroutine
// sends coalesced frames, a reader goroutine matches responses to requests
// by opaque. All methods are safe for concurrent use. It is meant for
// popshim's own clients (popshim send and consume, the benchmark,
// name-server registration) and tests, not for application use.
type Conn struct {
	nc     net.Conn
	opts   Options
	log    zerolog.Logger
	opaque atomic.Int32

	mu      sync.Mutex
	space   *sync.Cond     // signalled when the writer took the queue or the client closed
	out     []byte         // REQUIRES: mu held. Encoded frames not yet taken by the writer.
	free    []byte         // REQUIRES: mu held. The writer's last buffer, for reuse.
	pending pendingTable   // REQUIRES: mu held. In-flight requests by opaque.
	closed  bool           // REQUIRES: mu held
	err     error          // REQUIRES: mu held. Why the client closed.
	wake    chan struct{}  // capacity 1: the writer has work
	done    chan struct{}  // closed when the client closes
	wg      sync.WaitGroup // reader and writer goroutines
}

// Dial connects to addr (host:port) with default options.
func Dial(addr string) (*Conn, error) {
	return DialContext(context.Background(), addr, Options{})
}

// DialContext connects to addr and starts the reader and writer goroutines.
// Close must be called to stop them.
func DialContext(ctx context.Context, addr string, opts Options) (*Conn, error) {
	if opts.MaxFrameBytes == 0 {
		opts.MaxFrameBytes = codec.DefaultMaxFrame
	}
	if opts.DialTimeout == 0 {
		opts.DialTimeout = 3 * time.Second
	}
	if opts.MaxQueuedBytes == 0 {
		opts.MaxQueuedBytes = 8 << 20
	}
	d := net.Dialer{Timeout: opts.DialTimeout}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("client: dial %s: %w", addr, err)
	}
	if opts.TLS != nil {
		cfg := opts.TLS
		if cfg.ServerName == "" && !cfg.InsecureSkipVerify {
			// as tls.Dial: verify the certificate against the dialled host
			cfg = cfg.Clone()
			if host, _, err := net.SplitHostPort(addr); err == nil {
				cfg.ServerName = host
			}
		}
		tc := tls.Client(nc, cfg)
		hctx, cancel := context.WithTimeout(ctx, opts.DialTimeout)
		err := tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			_ = nc.Close()
			return nil, fmt.Errorf("client: tls handshake with %s: %w", addr, err)
		}
		nc = tc
	}
	c := &Conn{
		nc:      nc,
		opts:    opts,
		log:     zerolog.Nop(),
		pending: newPendingTable(),
		wake:    make(chan struct{}, 1),
		done:    make(chan struct{}),
	}
	if opts.Log != nil {
		c.log = opts.Log.With().Str("component", "remoting-client").Str("remote", addr).Logger()
	}
	c.space = sync.NewCond(&c.mu)
	c.wg.Add(2)
	go c.writeLoop()
	go c.readLoop()
	return c, nil
}

// Invoke sends req and waits for its response or for ctx. It overwrites
// req.Opaque and clears the flag bits. A non-success response code is not an
// error here: the caller reads resp.Code. Errors: ctx.Err(), or why the
// client closed (net.ErrClosed after Close).
func (c *Conn) Invoke(ctx context.Context, req *codec.Command) (*codec.Command, error) {
	type result struct {
		resp *codec.Command
		err  error
	}
	ch := make(chan result, 1)
	opaque, err := c.invoke(req, func(resp *codec.Command, err error) { ch <- result{resp, err} })
	if err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		return r.resp, r.err
	case <-ctx.Done():
		c.mu.Lock()
		c.pending.take(opaque)
		c.mu.Unlock()
		return nil, ctx.Err()
	}
}

// InvokeAsync sends req and returns at once; cb gets the response. It
// overwrites req.Opaque and clears the flag bits. It blocks only while more
// than MaxQueuedBytes wait for the writer. If it returns an error (client
// closed) cb is never called.
func (c *Conn) InvokeAsync(req *codec.Command, cb Callback) error {
	_, err := c.invoke(req, cb)
	return err
}

// InvokeOneway sends req with flag bit 1 (oneway) set; no response is
// expected. It overwrites req.Opaque.
func (c *Conn) InvokeOneway(req *codec.Command) error {
	req.Opaque = c.nextOpaque()
	req.Flag = codec.FlagOneway
	return c.send(req, nil)
}

func (c *Conn) invoke(req *codec.Command, cb Callback) (int32, error) {
	req.Opaque = c.nextOpaque()
	req.Flag = 0
	return req.Opaque, c.send(req, cb)
}

// nextOpaque returns the next request opaque. Opaques cycle through
// [codec.MinPreparedOpaque, math.MaxInt32] (always ten digits), so a
// prepared frame can take any of them (InvokePreparedAsync); a cycle is
// over a billion requests, far more than can be in flight.
func (c *Conn) nextOpaque() int32 {
	const span = math.MaxInt32 - int64(codec.MinPreparedOpaque) + 1
	n := int64(uint32(c.opaque.Add(1)) - 1)
	return codec.MinPreparedOpaque + int32(n%span)
}

// InvokePreparedAsync sends a request frame built in advance by
// codec.AppendPreparedFrame (frame, and opaqueAt as it returned) with a
// fresh opaque, and returns at once; cb gets the response. The frame is
// copied into the client's output buffer and patched there, so the caller
// may reuse or share frame. It skips header encoding entirely, which is
// what a load generator wants. The frame's flag must be a plain request
// (0). Blocking and errors as InvokeAsync.
func (c *Conn) InvokePreparedAsync(frame []byte, opaqueAt int, cb Callback) error {
	opaque := c.nextOpaque()
	return c.enqueuePrepared(pendingEntry{opaque: opaque, cb: cb}, frame, opaqueAt)
}

// InvokePreparedHead is InvokePreparedAsync for a caller that needs only
// the code, opaque, flag and remark of the response: h gets its
// codec.ResponseHead. A reply of the usual ACK shape (no extFields, no
// remark) is read in place by codec.CanonicalResponseHead with nothing
// allocated; any other reply is decoded by DecodeFrame and its head copied.
// The opaque match is the same as for every request. Blocking and errors
// as InvokeAsync; if it returns an error, h is never called.
func (c *Conn) InvokePreparedHead(frame []byte, opaqueAt int, h HeadHandler) error {
	opaque := c.nextOpaque()
	return c.enqueuePrepared(pendingEntry{opaque: opaque, head: h}, frame, opaqueAt)
}

// enqueuePrepared queues a copy of frame patched with e.opaque and
// registers e.
func (c *Conn) enqueuePrepared(e pendingEntry, frame []byte, opaqueAt int) error {
	return c.enqueue(e, func(out []byte) []byte {
		off := len(out)
		out = append(out, frame...)
		codec.PatchOpaque(out[off:], opaqueAt, e.opaque)
		return out
	})
}

// send queues the frame of cmd for the writer and, when cb is not nil,
// registers cb under cmd.Opaque in the same critical section.
func (c *Conn) send(cmd *codec.Command, cb Callback) error {
	if h := c.opts.BeforeRequest; h != nil {
		h(cmd)
	}
	return c.enqueue(pendingEntry{opaque: cmd.Opaque, cb: cb}, func(out []byte) []byte { return codec.AppendFrame(out, cmd) })
}

// enqueue appends a frame (appendTo) to the writer's buffer and, when e
// has a callback or handler, registers e under e.opaque, in one critical
// section; it waits while more than MaxQueuedBytes are queued.
func (c *Conn) enqueue(e pendingEntry, appendTo func([]byte) []byte) error {
	c.mu.Lock()
	for !c.closed && len(c.out) > c.opts.MaxQueuedBytes {
		c.space.Wait()
	}
	if c.closed {
		err := c.err
		c.mu.Unlock()
		return err
	}
	if e.used() {
		c.pending.put(e)
	}
	c.out = appendTo(c.out)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return nil
}

// writeLoop takes everything queued and writes it with one Write call.
func (c *Conn) writeLoop() {
	defer c.wg.Done()
	for {
		select {
		case <-c.wake:
		case <-c.done:
			return
		}
		c.mu.Lock()
		buf := c.out
		c.out, c.free = c.free[:0], nil
		c.space.Broadcast()
		c.mu.Unlock()
		if len(buf) == 0 {
			c.mu.Lock()
			c.free = buf
			c.mu.Unlock()
			continue
		}
		if _, err := c.nc.Write(buf); err != nil {
			c.fail(fmt.Errorf("client: write: %w", err))
			return
		}
		c.mu.Lock()
		c.free = buf[:0]
		c.mu.Unlock()
	}
}

// fail closes the client once with err and completes every pending request
// with it.
func (c *Conn) fail(err error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed, c.err = true, err
	pending := c.pending.drain()
	c.space.Broadcast()
	c.mu.Unlock()
	close(c.done)
	nc := c.nc
	if tc, ok := nc.(*tls.Conn); ok {
		// No close_notify: tls.Conn.Close would wait for a write stuck on
		// a peer that stopped reading.
		nc = tc.NetConn()
	}
	_ = nc.Close()
	if !errors.Is(err, net.ErrClosed) {
		c.log.Warn().Err(err).Msg("remoting client closed")
	}
	for i := range pending {
		pending[i].fail(err)
	}
}

// Close closes the connection, fails pending requests with net.ErrClosed and
// waits for the client's goroutines to end. It is safe to call twice.
func (c *Conn) Close() error {
	c.fail(net.ErrClosed)
	c.wg.Wait()
	return nil
}

// Done is closed when the client has closed, by Close or by an error.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns why the client closed, or nil while it is open.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}
