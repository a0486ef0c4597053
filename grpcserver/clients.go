package grpcserver

import (
	"context"
	"sync"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc/metadata"
)

// Request metadata the v5 clients send on every call (grpc-v5 reference
// §2.2; common/src/main/java/org/apache/rocketmq/common/constant/GrpcConstants.java).
const (
	MetaClientID      = "x-mq-client-id"      // host@pid@index@base36(µs); the key of all per-client state
	MetaLanguage      = "x-mq-language"       // GO, JAVA, ...
	MetaClientVersion = "x-mq-client-version" // e.g. 5.0.1-rc1 (every Go version), 5.2.1
	MetaNamespace     = "x-mq-namespace"      // empty by default
	MetaRequestID     = "x-mq-request-id"     // fresh per call
)

// ClientIDOf returns the x-mq-client-id of an incoming call, "" when
// absent. Any goroutine.
func ClientIDOf(ctx context.Context) string { return metaValue(ctx, MetaClientID) }

// metaValue is the first value of the lower-case metadata key of an
// incoming call, "" when absent. It reads the call's metadata in place:
// metadata.FromIncomingContext would copy the whole map on every call.
func metaValue(ctx context.Context, key string) string {
	if v := metadata.ValueFromIncomingContext(ctx, key); len(v) > 0 {
		return v[0]
	}
	return ""
}

// telemetryStream serialises writes to one Telemetry stream: the reply to
// a Settings item is written by the stream's own goroutine, commands the
// server pushes later by others, and grpc-go allows one sender at a time.
// outbox holds commands offered by goroutines that must not wait for the
// stream's flow control (the transaction check loop); the stream's
// handler writes them.
type telemetryStream struct {
	mu     sync.Mutex
	s      v2.MessagingService_TelemetryServer
	outbox chan *v2.TelemetryCommand
}

// telemetryOutbox is how many offered commands one stream holds before
// offer refuses more (a producer that does not read its stream).
const telemetryOutbox = 256

func newTelemetryStream(s v2.MessagingService_TelemetryServer) *telemetryStream {
	return &telemetryStream{s: s, outbox: make(chan *v2.TelemetryCommand, telemetryOutbox)}
}

// offer queues c for the stream's handler to write and reports whether it
// was queued (false: the outbox is full). Never blocks; any goroutine. A
// command still queued when the stream ends is dropped.
func (t *telemetryStream) offer(c *v2.TelemetryCommand) bool {
	select {
	case t.outbox <- c:
		return true
	default:
		return false
	}
}

func (t *telemetryStream) send(c *v2.TelemetryCommand) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.s.Send(c)
}

// clientState is what the endpoint knows of one client id.
type clientState struct {
	settings *v2.Settings     // the client's last Settings item, as sent
	stream   *telemetryStream // the open Telemetry stream, nil when none
	// conns are the open connections the client called on; when the last
	// one closes, the client is gone (its leases are released).
	conns map[*connInfo]struct{}
	// seenMillis is the broker clock at the client's last heartbeat (or
	// first call), for ClientExpiry.
	seenMillis int64
}

// state returns id's entry, creating it. REQUIRES: c.mu held.
func (c *clients) state(id string) *clientState {
	st := c.m[id]
	if st == nil {
		st = &clientState{}
		c.m[id] = st
	}
	return st
}

// attach records conn as a connection of client id (its first call on
// it) at broker clock nowMillis.
func (c *clients) attach(id string, conn *connInfo, nowMillis int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.state(id)
	if st.conns == nil {
		st.conns = make(map[*connInfo]struct{}, 1)
	}
	st.conns[conn] = struct{}{}
	if st.seenMillis < nowMillis {
		st.seenMillis = nowMillis
	}
}

// detach forgets conn for client id and reports whether it was the
// client's last open connection.
func (c *clients) detach(id string, conn *connInfo) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.m[id]
	if st == nil {
		return true
	}
	delete(st.conns, conn)
	return len(st.conns) == 0
}

// heartbeat records a heartbeat of client id at broker clock nowMillis.
func (c *clients) heartbeat(id string, nowMillis int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state(id).seenMillis = nowMillis
}

// expire forgets every client with no open connection whose last
// heartbeat is more than maxIdleMillis before nowMillis, and returns their
// ids.
func (c *clients) expire(nowMillis, maxIdleMillis int64) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var gone []string
	for id, st := range c.m {
		if len(st.conns) == 0 && st.stream == nil && nowMillis-st.seenMillis > maxIdleMillis {
			delete(c.m, id)
			gone = append(gone, id)
		}
	}
	return gone
}

// clients is the endpoint's table of v5 clients by x-mq-client-id. Other
// RPCs must not require an entry (Go v5.1.2 sends data RPCs before its
// Settings; Go v5.1.3 may go 5 minutes without a stream after a server
// restart). Safe for concurrent use.
type clients struct {
	mu sync.Mutex
	m  map[string]*clientState
	// open counts each client id's Telemetry streams open now
	// (openTelemetry); apart from m, which remove and expire prune.
	open map[string]int
}

func newClients() *clients {
	return &clients{m: map[string]*clientState{}, open: map[string]int{}}
}

// maxTelemetryStreams bounds the Telemetry streams one client id may hold
// open at once. A v5 client keeps one per endpoint and opens another only
// after the last one failed; 30,720 streams that were never read held
// 1,340 MiB of popshim's memory (2026-12-07), most of it the two
// goroutines each stream runs.
const maxTelemetryStreams = 16

// openTelemetry counts a Telemetry stream of client id as open and reports
// true, or false, counting nothing, when id already holds
// maxTelemetryStreams. Any goroutine.
func (c *clients) openTelemetry(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open[id] >= maxTelemetryStreams {
		return false
	}
	c.open[id]++
	return true
}

// closeTelemetry ends a stream counted by openTelemetry. Any goroutine.
func (c *clients) closeTelemetry(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open[id]--; c.open[id] <= 0 {
		delete(c.open, id)
	}
}

// settingsReceived stores s as id's settings, received on stream ts.
func (c *clients) settingsReceived(id string, s *v2.Settings, ts *telemetryStream) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.state(id)
	st.settings, st.stream = s, ts
}

// streamEnded forgets stream ts of id unless a newer stream replaced it.
// The settings stay: the client may reconnect and Heartbeat meanwhile.
func (c *clients) streamEnded(id string, ts *telemetryStream) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.m[id]; st != nil && st.stream == ts {
		st.stream = nil
	}
}

// remove forgets id (NotifyClientTermination) and reports whether it was known.
func (c *clients) remove(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.m[id]
	delete(c.m, id)
	return ok
}

// Settings returns the last Settings item client id sent, and false when
// none is known. The result must not be modified. Any goroutine.
func (c *clients) Settings(id string) (*v2.Settings, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.m[id]; st != nil && st.settings != nil {
		return st.settings, true
	}
	return nil, false
}

// streams returns the number of open Telemetry streams.
func (c *clients) streams() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, st := range c.m {
		if st.stream != nil {
			n++
		}
	}
	return n
}

// producerStreams returns the open Telemetry streams of producers whose
// last Settings publish topic (a v5 producer's group is the topic name).
func (c *clients) producerStreams(topic string) []*telemetryStream {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*telemetryStream
	for _, st := range c.m {
		if st.stream == nil || st.settings.GetClientType() != v2.ClientType_PRODUCER {
			continue
		}
		for _, t := range st.settings.GetPublishing().GetTopics() {
			if t.GetName() == topic {
				out = append(out, st.stream)
				break
			}
		}
	}
	return out
}

// stream returns id's open Telemetry stream, nil when none.
func (c *clients) stream(id string) *telemetryStream {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.m[id]; st != nil {
		return st.stream
	}
	return nil
}
