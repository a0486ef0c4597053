// Package remoting serves the Apache RocketMQ remoting protocol over TCP with
// gnet v2 and dispatches decoded requests by request code. It knows frames,
// opaques, flags and connections; it does not know what a code means.
//
// One request, on the server:
//
//	gnet loop  OnTraffic ─ Peek(4) ─ codec.PeekFrame ─ Peek(frame) ─ codec.DecodeFrame
//	           (owned *codec.Command) ─ Discard ─ Router.Lookup(code) ─ HandlerFunc
//	any goroutine  Conn.Reply ─ codec.AppendFrame into a pooled buffer ─ nothing else owed:
//	           non-blocking send from that goroutine (direct.go) ─ held (OnTraffic running, or an
//	           open ReplyScope: hold.go): pending list, one sendmsg when the hold ends ─ else
//	           pending list ─ one AsyncWritev per flush ─ write callback returns the buffers
//
// Accepting (accept.go): a Go net.Listener and one accept goroutine, not
// gnet's acceptor (gnet v2.9.7 stops its whole engine when accept fails
// with EMFILE). Each accepted socket is enrolled into a gnet engine that
// has no listener of its own (gnet.Client) and is an ordinary gnet
// connection from OnOpen on. A failed accept is counted, logged at a
// bounded rate and retried after a pause of 5 ms doubling to 1 s; the
// event loops, and so the open connections, never wait on it.
//
// Ownership rules:
//   - Nothing borrowed from gnet (Peek slices, the loop's shared read buffer)
//     leaves OnTraffic: the decoded Command owns its header fields and its
//     Body, except the Body of a code registered with
//     Router.HandleBorrowing, which aliases gnet's buffer while its handler
//     runs inside OnTraffic and is discarded (scribbled over in tests) once
//     the handler returned. A
//     large frame (over LargeFrameBytes) is moved out of gnet as it arrives
//     into a buffer allocated for it alone, and its Command's Body is the
//     tail of that buffer (largeframe.go).
//   - A reply buffer belongs to gnet from AsyncWritev until its write
//     callback runs; only the callback puts it back into the pool. A reply
//     sent whole by direct.go or hold.go goes back at once.
//   - A socket is written outside gnet only by direct.go and hold.go: under
//     the conn's mutex, while the conn is not marked closed (gnet runs
//     OnClose before it closes the descriptor) and gnet holds none of its
//     bytes.
//   - At most one AsyncWritev per connection is outstanding. Replies that
//     arrive meanwhile wait in the pending list and leave together in the next
//     writev, so replies completed together (one group-commit batch) coalesce
//     into few syscalls without any deliberate delay; held replies leave in
//     one sendmsg per connection when their holder lets go (hold.go).
//
// Oneway requests (flag bit 1) get no reply: the Conn a handler receives is a
// per-request view whose Reply drops the frame (and records result "oneway"
// in rocketmq_rpc_latency) when the request was oneway. Frames from a client
// with flag bit 0 set (responses) are ignored, except the answer to a
// request the server sent with Server.Invoke (invoke.go), which settles it.
//
// A malformed frame (bad length, too large, bad header) ends that
// connection's input: later bytes are discarded, the replies owed to the
// requests decoded before it are still written (bounded by
// ServerOptions.MalformedGrace), then the connection closes.
//
// Read backpressure (readbudget.go, largeframe.go, readpause_linux.go):
// ServerOptions.MaxReadBytes bounds the bytes of large frames being read
// plus the large requests decoded and not answered yet. A connection whose
// next frame header announces a large frame that does not fit waits, in a
// first-come first-served queue, with its socket no longer read (the
// event loop's epoll registration loses EPOLLIN, so TCP flow control
// stops the peer); an answer that returns budget admits the oldest
// waiting connections and wakes their loops. Small frames are never held
// back, so HEART_BEAT, POP and ACK keep flowing on every connection not
// stuck behind a large frame of its own. SYSTEM_BUSY from the writer and
// its [TIMEOUT_CLEAN_QUEUE] are answered by handlers as before: the bound
// only decides when a large frame is read.
//
// Server.Drain starts a graceful shutdown as a Java broker's isShuttingDown
// does: new requests from clients above V5_3_1 get GO_AWAY (1500), older
// clients are served as usual, and replies owed to earlier requests are
// unaffected (goaway.go).
//
// TLS (tls.go, tls_session.go; ServerOptions.TLS and TLSMode, as Java's
// tls.server.mode): the first OnTraffic of a connection peeks its first
// byte. 0x16 hands the socket to a TLS session: the loop duplicates the
// descriptor and lets gnet close its own, and the session's goroutines do
// the handshake and all crypto and carry the plaintext through a unix
// socketpair whose other end is enrolled into the same event loop, where it
// is served like any plaintext connection (same decode, replies, buffer
// ownership, limits). Under TLSEnforcing any other first byte closes the
// connection. The event loop never waits on a handshake or on crypto.
//
// The remoting client (Dial, the Conn that tests, the benchmark, the smoke
// tools and name-server registration use) lives in package client, so a
// client links neither gnet nor the broker; client.go names it here too
// (Client, ClientOptions, Dial, DialContext) for server-side code and
// tests. Package client must not import remoting.
package remoting
