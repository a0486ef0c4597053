package grpcserver

import (
	"context"
	"errors"
	"io"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"github.com/rs/zerolog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/popshim/popshim/codec"
)

// service implements apache.rocketmq.v2.MessagingService. Until the broker
// core is connected, every RPC except Telemetry and NotifyClientTermination
// answers gRPC UNIMPLEMENTED (the embedded Unimplemented server, embedded
// by value as protoc-gen-go-grpc ≥ 1.5 requires). grpc-go calls each
// method on its own goroutine.
type service struct {
	v2.UnimplementedMessagingServiceServer

	policy   SettingsPolicy
	clients  *clients
	stopping <-chan struct{} // closed when the server starts to stop
	log      zerolog.Logger
}

// Telemetry serves the bidirectional stream each client keeps open per
// endpoint (the proxy's ClientActivity.telemetry). Every Settings item is
// stored under the call's x-mq-client-id and answered at once with
// TelemetryCommand{status OK, settings = SettingsPolicy.Reply}; thread
// stack traces and verify results from the client are ignored. The stream
// stays open until the client ends it or the server stops. Errors, as the
// proxy: no client id ⇒ a CLIENT_ID_REQUIRED status item, then gRPC
// INVALID_ARGUMENT; Settings without publishing or subscription, a bad
// topic or group name ⇒ gRPC INVALID_ARGUMENT.
func (s *service) Telemetry(stream v2.MessagingService_TelemetryServer) error {
	ctx := stream.Context()
	ts := &telemetryStream{s: stream}
	id := ClientIDOf(ctx)
	if id == "" {
		_ = ts.send(&v2.TelemetryCommand{Status: NewStatus(v2.Code_CLIENT_ID_REQUIRED, MetaClientID+" is required")})
		return status.Error(codes.InvalidArgument, MetaClientID+" is required")
	}
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
			if err := s.telemetryCommand(id, ts, c); err != nil {
				return err
			}
		}
	}
}

// telemetryCommand handles one item from the client; a non-nil error ends
// the stream with it.
func (s *service) telemetryCommand(id string, ts *telemetryStream, c *v2.TelemetryCommand) error {
	settings := c.GetSettings()
	if settings == nil {
		return nil // thread_stack_trace, verify_message_result: nothing asked for them yet
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
// dropped and the call answered OK, also for a client never seen (the proxy
// answers UNRECOGNIZED_CLIENT_TYPE there; clients ignore the answer). No
// client id ⇒ CLIENT_ID_REQUIRED.
func (s *service) NotifyClientTermination(ctx context.Context, req *v2.NotifyClientTerminationRequest) (*v2.NotifyClientTerminationResponse, error) {
	id := ClientIDOf(ctx)
	if id == "" {
		return &v2.NotifyClientTerminationResponse{Status: NewStatus(v2.Code_CLIENT_ID_REQUIRED, MetaClientID+" is required")}, nil
	}
	known := s.clients.remove(id)
	s.log.Debug().Str("client", id).Str("group", req.GetGroup().GetName()).Bool("known", known).Msg("grpc client terminated")
	return &v2.NotifyClientTerminationResponse{Status: StatusOK()}, nil
}
