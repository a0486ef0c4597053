package grpcserver

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"github.com/rs/zerolog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
)

// service implements apache.rocketmq.v2.MessagingService on the broker
// core. Every RPC turns its request into the core's typed request, calls
// the core and shapes the answer; PullMessage, the offset RPCs and
// SyncLiteSubscription stay UNIMPLEMENTED (the embedded
// Unimplemented server, embedded by value as protoc-gen-go-grpc ≥ 1.5
// requires), as in rocketmq-proxy. grpc-go calls each method on its own
// goroutine; a handler may wait there for the core's completion callback
// (the core itself never blocks).
type service struct {
	v2.UnimplementedMessagingServiceServer

	core     *broker.Broker
	policy   SettingsPolicy
	send     SendLimits
	receive  ReceivePolicy
	routes   *routeRule
	auth     Authenticator
	metrics  *Metrics
	clients  *clients
	leases   *leases
	calls    *clientCalls    // admin calls waiting for a client's answer (client_call.go)
	sendHeld sendBudget      // decoded SendMessage bytes held (budget.go)
	reads    *readGate       // SendMessage requests being read (readgate.go)
	stopping <-chan struct{} // closed when the server starts to stop
	log      zerolog.Logger

	// abandoned counts receives whose caller left before their POP
	// answered (tests wait on it).
	abandoned atomic.Int64

	bgStop chan struct{} // closed by stopBackground
	bgDone chan struct{} // closed when the background loop returned
	bgOnce sync.Once
}

// newService builds the service of cfg (cfg.Core set).
func newService(cfg Config, stopping <-chan struct{}, log zerolog.Logger) *service {
	s := &service{
		core: cfg.Core, policy: cfg.Settings, send: cfg.Send, receive: cfg.Receive,
		routes: newRouteRule(cfg.Routes), auth: cfg.Auth, metrics: cfg.Metrics,
		clients: newClients(), calls: newClientCalls(), stopping: stopping, log: log,
		bgStop: make(chan struct{}), bgDone: make(chan struct{}),
		sendHeld: sendBudget{limit: cfg.MaxSendInflightBytes},
		reads:    newReadGate(cfg.MaxSendInflightBytes, cfg.MaxRecvMsgBytes),
	}
	if s.policy.Group == nil {
		s.policy.Group = s.groupPolicy
	}
	s.leases = newLeases(cfg.Leases, cfg.Core, cfg.Metrics, log)
	s.leases.retryDelay = func(group string, attempt int32) time.Duration {
		gp, _ := s.groupPolicy(group)
		return gp.retryDelay(attempt)
	}
	return s
}

// startBackground starts the loop that renews leases and forgets expired
// clients. Serve calls it; later calls do nothing.
func (s *service) startBackground() {
	s.bgOnce.Do(func() { go s.background() })
}

// stopBackground ends the background loop and waits for it.
func (s *service) stopBackground() {
	s.startBackground() // so bgDone is closed even if Serve never ran it
	select {
	case <-s.bgStop:
	default:
		close(s.bgStop)
	}
	<-s.bgDone
}

// background runs every LeasePolicy.ScanInterval: renews the leases that
// are about to end, and forgets clients with no connection whose last
// heartbeat is older than ClientExpiry (releasing their leases).
func (s *service) background() {
	defer close(s.bgDone)
	tick := time.NewTicker(s.leases.pol.ScanInterval)
	defer tick.Stop()
	for {
		select {
		case <-s.bgStop:
			return
		case <-tick.C:
			s.backgroundPass()
		}
	}
}

// backgroundPass is one round of background: renew, then forget the
// clients past ClientExpiry and release their leases.
func (s *service) backgroundPass() {
	s.leases.scan()
	for _, id := range s.clients.expire(s.core.Now(), ClientExpiry.Milliseconds()) {
		s.leases.releaseClient(id)
	}
}

// ClientExpiry is how long the endpoint keeps a client that has no
// connection and sent no heartbeat (the proxy's channel expiry, 120 s):
// its settings are forgotten and its leases released then.
const ClientExpiry = 120 * time.Second

// connOpened counts an accepted connection.
func (s *service) connOpened(*connInfo) { s.metrics.connOpened() }

// connClosed releases what a closed connection held: its parked polls and
// client registrations in the core, and the leases of every client whose
// last connection it was. Runs on the grpc-go goroutine that closes the
// connection (trackedConn.Close).
func (s *service) connClosed(c *connInfo) {
	s.metrics.connClosed()
	s.core.ConnClosed(c.id)
	stopping := false
	select {
	case <-s.stopping:
		stopping = true // the server closes every connection: leases are kept (leases_keep.go)
	default:
	}
	for _, id := range c.close() {
		if s.clients.detach(id, c) && !stopping {
			s.leases.releaseClient(id)
		}
	}
}

// attachClient records that client id called on the call's connection
// (its first call there), so the connection's close can release the
// client. Any goroutine.
func (s *service) attachClient(ctx context.Context, id string) {
	c := connOf(ctx)
	if c == nil || id == "" {
		return
	}
	if c.sawClient(id) {
		s.clients.attach(id, c, s.core.Now())
	}
}

// requireClient returns the call's x-mq-client-id, or the
// CLIENT_ID_REQUIRED Status the proxy answers without one.
func requireClient(ctx context.Context) (string, *v2.Status) {
	id := ClientIDOf(ctx)
	if id == "" {
		return "", NewStatus(v2.Code_CLIENT_ID_REQUIRED, MetaClientID+" is required")
	}
	return id, nil
}

// Telemetry serves the bidirectional stream each client keeps open per
// endpoint (the proxy's ClientActivity.telemetry). Every Settings item is
// stored under the call's x-mq-client-id and answered at once with
// TelemetryCommand{status OK, settings = SettingsPolicy.Reply}; thread
// stack traces and verify results from the client settle the admin calls
// whose nonce they carry (client_call.go). Commands offered to the stream
// by other goroutines (the transaction checks'
// RecoverOrphanedTransactionCommand, the admin calls'
// PrintThreadStackTraceCommand and VerifyMessageCommand) are written by
// this handler; calls pushed on the stream fail when it ends. The stream
// stays open until the client ends it or the server stops. Errors, as the
// proxy: no client id ⇒ a CLIENT_ID_REQUIRED status item, then gRPC
// INVALID_ARGUMENT; Settings without publishing or subscription, a bad
// topic or group name ⇒ gRPC INVALID_ARGUMENT; a client id that holds
// maxTelemetryStreams open already ⇒ gRPC RESOURCE_EXHAUSTED (popshim
// only: the proxy has no bound).
func (s *service) Telemetry(stream v2.MessagingService_TelemetryServer) error {
	ctx := stream.Context()
	ts := newTelemetryStream(stream)
	id := ClientIDOf(ctx)
	if id == "" {
		_ = ts.send(&v2.TelemetryCommand{Status: NewStatus(v2.Code_CLIENT_ID_REQUIRED, MetaClientID+" is required")})
		return status.Error(codes.InvalidArgument, MetaClientID+" is required")
	}
	if !s.clients.openTelemetry(id) {
		s.log.Debug().Str("client", id).Int("open", maxTelemetryStreams).Msg("grpc telemetry stream refused: the client holds the most allowed")
		return status.Errorf(codes.ResourceExhausted, "client %s holds %d Telemetry streams already", id, maxTelemetryStreams)
	}
	defer s.clients.closeTelemetry(id)
	defer s.callsStreamEnded(ts)
	defer s.clients.streamEnded(id, ts)

	// Recv blocks; a reader goroutine lets the handler also watch for the
	// server's stop. It ends when the stream does (grpc-go cancels the
	// stream when the handler returns).
	cmds := make(chan *v2.TelemetryCommand)
	errc := make(chan error, 1)
	go func() {
		for {
			c, err := stream.Recv()
			if err != nil {
				errc <- err
				return
			}
			select {
			case cmds <- c:
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		select {
		case <-s.stopping:
			return nil
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		case err := <-errc:
			if errors.Is(err, io.EOF) {
				return nil // the client half-closed: complete the stream
			}
			return err
		case c := <-cmds:
			if err := s.telemetryCommand(ctx, id, ts, c); err != nil {
				return err
			}
		case c := <-ts.outbox:
			if err := ts.send(c); err != nil {
				return err
			}
		}
	}
}

// telemetryCommand handles one item from the client; a non-nil error ends
// the stream with it.
func (s *service) telemetryCommand(ctx context.Context, id string, ts *telemetryStream, c *v2.TelemetryCommand) error {
	settings := c.GetSettings()
	if settings == nil {
		s.callAnswered(id, c) // thread_stack_trace, verify_message_result (client_call.go)
		return nil
	}
	if st := s.authorize(ctx, settings); st != nil {
		// As the proxy: an item with only the failing Status; the client
		// never completes its start-up. The stream stays open.
		return ts.send(&v2.TelemetryCommand{Status: st})
	}
	if err := checkSettingsNames(settings); err != nil {
		return status.Error(codes.InvalidArgument, "process client telemetryCommand failed. "+err.Error())
	}
	reply, err := s.policy.Reply(settings)
	if err != nil {
		return status.Error(codes.InvalidArgument, "process client telemetryCommand failed. "+err.Error())
	}
	s.clients.settingsReceived(id, settings, ts)
	s.log.Debug().Str("client", id).Stringer("type", settings.GetClientType()).Msg("grpc client settings")
	return ts.send(&v2.TelemetryCommand{Status: StatusOK(), Command: &v2.TelemetryCommand_Settings{Settings: reply}})
}

// checkSettingsNames validates the publishing topics or the subscription
// group and topics of a Settings item (the proxy's ILLEGAL_TOPIC /
// ILLEGAL_CONSUMER_GROUP checks in processAndWriteClientSettings).
func checkSettingsNames(st *v2.Settings) error {
	if p := st.GetPublishing(); p != nil {
		for _, t := range p.GetTopics() {
			if err := codec.ValidateTopic(t.GetName()); err != nil {
				return err
			}
		}
	}
	if sub := st.GetSubscription(); sub != nil {
		if err := codec.ValidateGroup(sub.GetGroup().GetName()); err != nil {
			return err
		}
		for _, e := range sub.GetSubscriptions() {
			if err := codec.ValidateTopic(e.GetTopic().GetName()); err != nil {
				return err
			}
		}
	}
	return nil
}

// NotifyClientTermination is sent by Java clients and Go v5.1.4 at
// shutdown (Go ≤ v5.1.3 never sends it). The client's stored settings are
// dropped, its registrations in the core's client table removed for the
// group it names, and every message it held under auto-renew made visible
// again (LeasePolicy.ReleaseInvisible); the call is answered OK, also for
// a client never seen (the proxy answers UNRECOGNIZED_CLIENT_TYPE there;
// clients ignore the answer). No client id ⇒ CLIENT_ID_REQUIRED.
func (s *service) NotifyClientTermination(ctx context.Context, req *v2.NotifyClientTerminationRequest) (*v2.NotifyClientTerminationResponse, error) {
	id, st := requireClient(ctx)
	if st != nil {
		return &v2.NotifyClientTerminationResponse{Status: st}, nil
	}
	if st := s.authorize(ctx, req); st != nil {
		return &v2.NotifyClientTerminationResponse{Status: st}, nil
	}
	known := s.clients.remove(id)
	s.leases.releaseClient(id)
	s.unregister(ctx, id, req.GetGroup().GetName())
	s.log.Debug().Str("client", id).Str("group", req.GetGroup().GetName()).Bool("known", known).Msg("grpc client terminated")
	return &v2.NotifyClientTerminationResponse{Status: StatusOK()}, nil
}
