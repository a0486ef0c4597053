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

func metaValue(ctx context.Context, key string) string {
	md, ok := metadata.FromIncomingContext(ctx)
	if !ok {
		return ""
	}
	if v := md.Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

// telemetryStream serialises writes to one Telemetry stream: the reply to
// a Settings item is written by the stream's own goroutine, commands the
// server pushes later by others, and grpc-go allows one sender at a time.
type telemetryStream struct {
	mu sync.Mutex
	s  v2.MessagingService_TelemetryServer
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
}

// clients is the endpoint's table of v5 clients by x-mq-client-id. Other
// RPCs must not require an entry (Go v5.1.2 sends data RPCs before its
// Settings; Go v5.1.3 may go 5 minutes without a stream after a server
// restart). Safe for concurrent use.
type clients struct {
	mu sync.Mutex
	m  map[string]*clientState
}

func newClients() *clients { return &clients{m: map[string]*clientState{}} }

// settingsReceived stores s as id's settings, received on stream ts.
func (c *clients) settingsReceived(id string, s *v2.Settings, ts *telemetryStream) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.m[id]
	if st == nil {
		st = &clientState{}
		c.m[id] = st
	}
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
