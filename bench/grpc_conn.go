package bench

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/durationpb"
)

// The request metadata every v5 client sends on every call (grpc-v5
// reference §2.2; GrpcConstants.java in apache/rocketmq). The bench
// presents itself as the Go client does.
const (
	mdClientID      = "x-mq-client-id"      // host@pid@index@base36(µs): the key of all per-client state
	mdLanguage      = "x-mq-language"       // GO
	mdClientVersion = "x-mq-client-version" // 5.0.1-rc1, as every Go client version sends
	mdProtocol      = "x-mq-protocol"       // v2
	mdDateTime      = "x-mq-date-time"      // local time as yyyyMMddTHHmmssZ (the Z is literal)
	mdRequestID     = "x-mq-request-id"     // fresh per call
	clientVersion   = "5.0.1-rc1"
)

// Deadlines of the calls outside the measured path.
const (
	// unaryTimeout bounds one SendMessage, AckMessage, QueryRoute,
	// Heartbeat or Settings reply (the v5 clients' request timeout is 3 s;
	// the bench allows more on a loaded machine).
	unaryTimeout = 10 * time.Second
	// receiveSlack is added to the long-polling timeout for a
	// ReceiveMessage deadline (Java: await + request timeout).
	receiveSlack = 10 * time.Second
	// routeRetry is the pause between QueryRoute attempts at start.
	routeRetry = 250 * time.Millisecond
)

// v5Conn is one v5 client instance on one HTTP/2 connection: its own
// x-mq-client-id, a Telemetry stream that carried its Settings, the
// route of the bench topic. Its calls may be made from any goroutine.
type v5Conn struct {
	cc     *grpc.ClientConn
	svc    v2.MessagingServiceClient
	id     string
	md     metadata.MD     // the metadata of every call but x-mq-request-id; read-only
	base   context.Context // md on a context cancelled by close
	cancel context.CancelFunc
	seq    atomic.Uint64 // x-mq-request-id
	tel    v2.MessagingService_TelemetryClient
	telEnd chan struct{} // closed when the Telemetry reader returns
	queues []*v2.MessageQueue
	access *v2.Endpoints
	group  *v2.Resource // consumers only
	kind   v2.ClientType
}

// clientSeq numbers the client instances of this process (x-mq-client-id).
var clientSeq atomic.Int64

// dialV5 opens a connection to o.Addr (TLS without verification when
// o.TLS) and builds its client instance; nothing is sent yet. Errors: the
// address does not parse.
func dialV5(ctx context.Context, o *Options) (*v5Conn, error) {
	access, err := endpointsOf(o.Addr)
	if err != nil {
		return nil, err
	}
	creds := insecure.NewCredentials()
	if o.TLS {
		creds = credentials.NewTLS(&tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}) //nolint:gosec // --tls measures a test certificate
	}
	cc, err := grpc.NewClient(o.Addr, grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20), grpc.MaxCallSendMsgSize(64<<20)))
	if err != nil {
		return nil, fmt.Errorf("bench: grpc client for %s: %w", o.Addr, err)
	}
	host, _ := os.Hostname()
	c := &v5Conn{cc: cc, svc: v2.NewMessagingServiceClient(cc), access: access, telEnd: make(chan struct{})}
	c.id = host + "@" + strconv.Itoa(os.Getpid()) + "@" + strconv.FormatInt(clientSeq.Add(1)-1, 10) + "@" +
		strconv.FormatInt(time.Now().UnixMicro(), 36)
	c.md = metadata.Pairs(mdClientID, c.id, mdLanguage, "GO", mdClientVersion, clientVersion, mdProtocol, "v2",
		mdDateTime, time.Now().Format("20060102T150405Z"))
	c.base, c.cancel = context.WithCancel(metadata.NewOutgoingContext(context.WithoutCancel(ctx), c.md))
	return c, nil
}

// endpointsOf is the v2.Endpoints of host:port as the Go client builds
// it: IPv4 or IPv6 for an address literal, DOMAIN_NAME for a name.
func endpointsOf(addr string) (*v2.Endpoints, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("bench: --addr %q: %w", addr, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65535 {
		return nil, fmt.Errorf("bench: --addr %q: bad port", addr)
	}
	scheme := v2.AddressScheme_DOMAIN_NAME
	if ip := net.ParseIP(host); ip != nil {
		scheme = v2.AddressScheme_IPv4
		if ip.To4() == nil {
			scheme = v2.AddressScheme_IPv6
		}
	}
	return &v2.Endpoints{Scheme: scheme, Addresses: []*v2.Address{{Host: host, Port: int32(p)}}}, nil
}

// call returns a context for one call on the client's own context
// (cancelled by close): its metadata, a fresh x-mq-request-id, deadline d
// after now. Any goroutine.
func (c *v5Conn) call(d time.Duration) (context.Context, context.CancelFunc) {
	return c.withRequest(c.base, d)
}

// callOn is call on parent instead (the caller's cancellation).
func (c *v5Conn) callOn(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return c.withRequest(metadata.NewOutgoingContext(parent, c.md), d)
}

func (c *v5Conn) withRequest(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, d)
	return metadata.AppendToOutgoingContext(ctx, mdRequestID, strconv.FormatUint(c.seq.Add(1), 36)), cancel
}

// statusError is a v2 Status other than OK, as an error.
type statusError struct {
	what string
	code v2.Code
	msg  string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("bench: %s: status %s (%d): %s", e.what, e.code, int32(e.code), e.msg)
}

// checkStatus returns nil for OK and a *statusError otherwise (a missing
// status is INTERNAL_SERVER_ERROR, as the clients read it).
func checkStatus(what string, st *v2.Status) error {
	if st == nil {
		return &statusError{what: what, code: v2.Code_INTERNAL_SERVER_ERROR, msg: "no status"}
	}
	if st.GetCode() == v2.Code_OK {
		return nil
	}
	return &statusError{what: what, code: st.GetCode(), msg: st.GetMessage()}
}

// handshake does what a v5 client does at start (grpc-v5 reference §9.1,
// §9.2): QueryRoute for topic to the access point, retried until it
// answers OK with a queue (at most o.GRPC.RouteWait); a Telemetry stream
// whose first item is the client's Settings, and the server's Settings
// reply (mandatory: the proxy keys Heartbeat and ReceiveMessage on it);
// then Heartbeat. settings is the client's Settings item. Errors: the
// first failure, with the RPC named.
func (c *v5Conn) handshake(ctx context.Context, o *Options, topic string, settings *v2.Settings) error {
	c.kind = settings.GetClientType()
	if sub := settings.GetSubscription(); sub != nil {
		c.group = sub.GetGroup()
	}
	if err := c.queryRoute(ctx, o, topic); err != nil {
		return err
	}
	if err := c.openTelemetry(settings); err != nil {
		return err
	}
	hctx, cancel := c.callOn(ctx, unaryTimeout)
	defer cancel()
	hb, err := c.svc.Heartbeat(hctx, &v2.HeartbeatRequest{Group: c.group, ClientType: c.kind})
	if err != nil {
		return fmt.Errorf("bench: Heartbeat: %w", err)
	}
	return checkStatus("Heartbeat", hb.GetStatus())
}

// queryRoute fills c.queues, retrying as handshake says.
func (c *v5Conn) queryRoute(ctx context.Context, o *Options, topic string) error {
	deadline := time.Now().Add(o.GRPC.RouteWait)
	for {
		err := c.queryRouteOnce(ctx, topic)
		if err == nil || ctx.Err() != nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(routeRetry):
		}
	}
}

// queryRouteOnce asks once; success is status OK with a queue of broker
// id 0 (the master) whose permission is not NONE.
func (c *v5Conn) queryRouteOnce(ctx context.Context, topic string) error {
	qctx, cancel := c.callOn(ctx, unaryTimeout)
	defer cancel()
	resp, err := c.svc.QueryRoute(qctx, &v2.QueryRouteRequest{Topic: &v2.Resource{Name: topic}, Endpoints: c.access})
	if err != nil {
		return fmt.Errorf("bench: QueryRoute %s: %w", topic, err)
	}
	if err := checkStatus("QueryRoute "+topic, resp.GetStatus()); err != nil {
		return err
	}
	c.queues = c.queues[:0]
	for _, q := range resp.GetMessageQueues() {
		if q.GetBroker().GetId() == 0 && q.GetPermission() != v2.Permission_NONE {
			c.queues = append(c.queues, q)
		}
	}
	if len(c.queues) == 0 {
		return fmt.Errorf("bench: QueryRoute %s: no usable queue among %d", topic, len(resp.GetMessageQueues()))
	}
	return nil
}

// openTelemetry opens the Telemetry stream, writes settings and waits
// (unaryTimeout) for the server's Settings reply with status OK; later
// items (server commands) are read and dropped until the stream ends.
func (c *v5Conn) openTelemetry(settings *v2.Settings) error {
	ctx := metadata.AppendToOutgoingContext(c.base, mdRequestID, strconv.FormatUint(c.seq.Add(1), 36))
	stream, err := c.svc.Telemetry(ctx)
	if err != nil {
		return fmt.Errorf("bench: Telemetry: %w", err)
	}
	c.tel = stream
	if err := stream.Send(&v2.TelemetryCommand{Command: &v2.TelemetryCommand_Settings{Settings: settings}}); err != nil {
		close(c.telEnd)
		return fmt.Errorf("bench: Telemetry: send Settings: %w", err)
	}
	first := make(chan error, 1)
	go func() {
		defer close(c.telEnd)
		reply, err := stream.Recv()
		switch {
		case err != nil:
			first <- fmt.Errorf("bench: Telemetry: Settings reply: %w", err)
			return
		case reply.GetSettings() == nil:
			first <- checkStatus("Telemetry Settings reply (no settings)", reply.GetStatus())
			if reply.GetStatus().GetCode() == v2.Code_OK {
				return
			}
		default:
			first <- checkStatus("Telemetry Settings reply", reply.GetStatus())
		}
		for {
			if _, err := stream.Recv(); err != nil {
				return
			}
		}
	}()
	t := time.NewTimer(unaryTimeout)
	defer t.Stop()
	select {
	case err := <-first:
		return err
	case <-t.C:
		return errors.New("bench: Telemetry: no Settings reply within " + unaryTimeout.String())
	}
}

// close says goodbye as the Java client does (NotifyClientTermination,
// best effort), half-closes Telemetry and closes the connection.
func (c *v5Conn) close() {
	if c.tel != nil {
		ctx, cancel := c.call(2 * time.Second)
		_, _ = c.svc.NotifyClientTermination(ctx, &v2.NotifyClientTerminationRequest{Group: c.group})
		cancel()
		_ = c.tel.CloseSend()
		select {
		case <-c.telEnd:
		case <-time.After(2 * time.Second):
		}
	}
	c.cancel()
	_ = c.cc.Close()
}

// closeV5 closes every client.
func closeV5(cs []*v5Conn) {
	for _, c := range cs {
		c.close()
	}
}

// producerSettings is a Go producer's first Settings item.
func producerSettings(access *v2.Endpoints, topic string) *v2.Settings {
	kind := v2.ClientType_PRODUCER
	return &v2.Settings{
		ClientType: &kind, AccessPoint: access, RequestTimeout: durationpb.New(3 * time.Second),
		BackoffPolicy: &v2.RetryPolicy{MaxAttempts: 3, Strategy: &v2.RetryPolicy_ExponentialBackoff{
			ExponentialBackoff: &v2.ExponentialBackoff{Initial: durationpb.New(0), Max: durationpb.New(0), Multiplier: 1}}},
		PubSub:    &v2.Settings_Publishing{Publishing: &v2.Publishing{Topics: []*v2.Resource{{Name: topic}}}},
		UserAgent: userAgent(),
	}
}

// consumerSettings is a simple consumer's first Settings item: group,
// topic with TAG "*", the long-polling timeout.
func consumerSettings(access *v2.Endpoints, group, topic string, poll time.Duration) *v2.Settings {
	kind := v2.ClientType_SIMPLE_CONSUMER
	return &v2.Settings{
		ClientType: &kind, AccessPoint: access, RequestTimeout: durationpb.New(3 * time.Second),
		PubSub: &v2.Settings_Subscription{Subscription: &v2.Subscription{
			Group: &v2.Resource{Name: group},
			Subscriptions: []*v2.SubscriptionEntry{{Topic: &v2.Resource{Name: topic},
				Expression: &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: "*"}}},
			LongPollingTimeout: durationpb.New(poll),
		}},
		UserAgent: userAgent(),
	}
}

func userAgent() *v2.UA {
	host, _ := os.Hostname()
	return &v2.UA{Language: v2.Language_GOLANG, Version: clientVersion, Platform: "popshim-bench", Hostname: host}
}

// dialHandshaken opens o.Conns clients and does each one's handshake
// with the Settings settingsOf builds from its access point. On error the
// ones opened are closed.
func dialHandshaken(ctx context.Context, o *Options, topic string, settingsOf func(*v2.Endpoints) *v2.Settings) ([]*v5Conn, error) {
	out := make([]*v5Conn, 0, o.Conns)
	for range o.Conns {
		c, err := dialV5(ctx, o)
		if err == nil {
			err = c.handshake(ctx, o, topic, settingsOf(c.access))
			if err != nil {
				c.close()
			}
		}
		if err != nil {
			closeV5(out)
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}
