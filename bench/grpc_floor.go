package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
)

// The grpc-go server options of the floor server: those of popshim's
// gRPC endpoint (grpcserver.DefaultConfig) that bear on the cost of a
// call, copied here so the load generator does not link the broker;
// TestGRPCFloorOptionsMatchEndpoint keeps them equal. The endpoint's
// wire codec, interceptors, credentials wrapper and authentication are
// deliberately left out: they are popshim's, and the floor measures
// grpc-go without them.
const (
	floorStreamWorkers         = 256           // grpc.NumStreamWorkers
	floorMaxConcurrentStreams  = 256           // per connection
	floorMaxRecvMsgBytes       = 4<<20 + 1<<20 // largest request, bytes
	floorIdleTimeout           = 120 * time.Second
	floorKeepaliveTime         = 2 * time.Minute
	floorKeepaliveTimeout      = 20 * time.Second
	floorMinClientPingInterval = 10 * time.Second
	floorRouteQueues           = 8 // queues of every QueryRoute answer
)

// ServeGRPCFloor serves apache.rocketmq.v2.MessagingService on lis with
// grpc-go and nothing else, until ctx ends; then it closes every
// connection (grpc.Server.Stop) and returns nil, or the listener's fatal
// error. It is the reference for grpc-go's own per-call CPU that
// `popshim bench grpc-send --server-pid` measures beside popshim's
// endpoint (make bench-grpc, system grpc-floor): it stores nothing and is
// never a broker. QueryRoute answers OK with 8 READ_WRITE queues of
// broker id 0 whose endpoints are lis's own address, whatever the topic;
// Telemetry answers each Settings item with the same Settings and status
// OK; Heartbeat answers OK; SendMessage answers OK with one
// SendResultEntry per message (status OK, the client's message id,
// offset 0); every other RPC is UNIMPLEMENTED. The server options are
// popshim's endpoint's that affect a call's cost (stream workers,
// concurrent streams, keepalive). lis is closed when it returns. Blocks;
// call it from one goroutine. Errors: lis's address is not host:port.
func ServeGRPCFloor(ctx context.Context, lis net.Listener) error {
	self, err := endpointsOf(lis.Addr().String())
	if err != nil {
		_ = lis.Close()
		return err
	}
	gs := grpc.NewServer(
		grpc.NumStreamWorkers(floorStreamWorkers),
		grpc.MaxConcurrentStreams(floorMaxConcurrentStreams),
		grpc.MaxRecvMsgSize(floorMaxRecvMsgBytes),
		grpc.KeepaliveParams(keepalive.ServerParameters{
			MaxConnectionIdle: floorIdleTimeout,
			Time:              floorKeepaliveTime,
			Timeout:           floorKeepaliveTimeout,
		}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{
			MinTime:             floorMinClientPingInterval,
			PermitWithoutStream: true,
		}),
	)
	v2.RegisterMessagingServiceServer(gs, &floorService{self: self})
	stopped := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			gs.Stop()
		case <-stopped:
		}
	}()
	err = gs.Serve(lis)
	close(stopped)
	gs.Stop() // Serve failed on its own: release what it holds
	if err != nil && !errors.Is(err, grpc.ErrServerStopped) && ctx.Err() == nil {
		return fmt.Errorf("bench: grpc floor server on %s: %w", lis.Addr(), err)
	}
	return nil
}

// floorService is ServeGRPCFloor's MessagingService: the answers a v5
// producer needs to start and send, built per call, no state. Its
// methods are called by grpc-go on any goroutine.
type floorService struct {
	v2.UnimplementedMessagingServiceServer
	self *v2.Endpoints // the server's own address, read-only
}

// QueryRoute answers floorRouteQueues READ_WRITE queues of broker id 0 at
// the server's own address.
func (s *floorService) QueryRoute(_ context.Context, req *v2.QueryRouteRequest) (*v2.QueryRouteResponse, error) {
	broker := &v2.Broker{Name: "grpc-floor", Id: 0, Endpoints: s.self}
	resp := &v2.QueryRouteResponse{Status: &v2.Status{Code: v2.Code_OK},
		MessageQueues: make([]*v2.MessageQueue, floorRouteQueues)}
	for i := range resp.MessageQueues {
		resp.MessageQueues[i] = &v2.MessageQueue{Topic: req.GetTopic(), Id: int32(i), Permission: v2.Permission_READ_WRITE,
			Broker: broker, AcceptMessageTypes: []v2.MessageType{v2.MessageType_NORMAL}}
	}
	return resp, nil
}

// Telemetry answers each Settings item with the same Settings and status
// OK, and drops every other item, until the client half-closes.
func (s *floorService) Telemetry(stream v2.MessagingService_TelemetryServer) error {
	for {
		c, err := stream.Recv()
		if err != nil {
			return nil
		}
		set := c.GetSettings()
		if set == nil {
			continue
		}
		if err := stream.Send(&v2.TelemetryCommand{Status: &v2.Status{Code: v2.Code_OK},
			Command: &v2.TelemetryCommand_Settings{Settings: set}}); err != nil {
			return err
		}
	}
}

// Heartbeat answers OK.
func (s *floorService) Heartbeat(context.Context, *v2.HeartbeatRequest) (*v2.HeartbeatResponse, error) {
	return &v2.HeartbeatResponse{Status: &v2.Status{Code: v2.Code_OK}}, nil
}

// SendMessage answers OK with one entry per message (status OK, the
// message's own id, offset 0) and keeps nothing.
func (s *floorService) SendMessage(_ context.Context, req *v2.SendMessageRequest) (*v2.SendMessageResponse, error) {
	resp := &v2.SendMessageResponse{Status: &v2.Status{Code: v2.Code_OK},
		Entries: make([]*v2.SendResultEntry, len(req.GetMessages()))}
	for i, m := range req.GetMessages() {
		resp.Entries[i] = &v2.SendResultEntry{Status: &v2.Status{Code: v2.Code_OK},
			MessageId: m.GetSystemProperties().GetMessageId(), Offset: 0}
	}
	return resp, nil
}
