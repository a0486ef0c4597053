package bench

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
)

// v5Server is an in-process MessagingService on a real loopback listener
// that holds a v5 client to the rules the proxy enforces, so the bench's
// client side can be tested without Java: every call needs
// x-mq-client-id; Heartbeat and ReceiveMessage need that client's
// Settings from Telemetry; ReceiveMessage and AckMessage need a
// heartbeat of a consumer group. Messages live in memory; a receipt
// handle is acked once.
type v5Server struct {
	v2.UnimplementedMessagingServiceServer
	addr string

	mu         sync.Mutex
	notFound   int                     // QueryRoute answers TOPIC_NOT_FOUND this many more times
	settings   map[string]*v2.Settings // by client id
	heartbeats map[string]bool         // client ids that sent Heartbeat after their Settings
	order      map[string][]string     // RPC names per client id, in arrival order
	requestIDs map[string]bool
	missingMD  []string                   // RPCs that came without a header the clients always send
	ready      []*v2.Message              // sent, not received
	inflight   map[string]*v2.Message     // receipt handle → message
	acked      map[string]bool            // message ids acked
	stored     int                        // messages sent
	handles    int                        // receipt handles issued
	ackCalls   int                        // AckMessage calls
	terminated map[string]bool            // NotifyClientTermination per client id
	queues     int                        // queues of every route
	pollWait   time.Duration              // an empty receive waits this long (bounded by the deadline)
	hook       func(rpc, id string) error // optional: a non-nil error fails the RPC with it
}

// startV5Server serves on 127.0.0.1:0 (TLS when cfg is not nil) until
// the test ends.
func startV5Server(t *testing.T, cfg *tls.Config) *v5Server {
	t.Helper()
	s := &v5Server{settings: map[string]*v2.Settings{}, heartbeats: map[string]bool{}, order: map[string][]string{},
		requestIDs: map[string]bool{}, inflight: map[string]*v2.Message{}, acked: map[string]bool{},
		terminated: map[string]bool{}, queues: 4, pollWait: 200 * time.Millisecond}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var opts []grpc.ServerOption
	if cfg != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(cfg)))
	}
	gs := grpc.NewServer(opts...)
	v2.RegisterMessagingServiceServer(gs, s)
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	s.addr = lis.Addr().String()
	return s
}

// enter checks the metadata of a call named rpc and records it; it
// returns the client id, or a status to answer with.
func (s *v5Server) enter(ctx context.Context, rpc string) (string, *v2.Status) {
	md, _ := metadata.FromIncomingContext(ctx)
	get := func(k string) string {
		if v := md.Get(k); len(v) > 0 {
			return v[0]
		}
		return ""
	}
	id := get(mdClientID)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range []string{mdLanguage, mdClientVersion, mdProtocol, mdRequestID, mdDateTime} {
		if get(k) == "" {
			s.missingMD = append(s.missingMD, rpc+" without "+k)
		}
	}
	if rid := get(mdRequestID); rid != "" {
		if s.requestIDs[id+"/"+rid] {
			s.missingMD = append(s.missingMD, rpc+" reused request id "+rid)
		}
		s.requestIDs[id+"/"+rid] = true
	}
	if id == "" {
		return "", &v2.Status{Code: v2.Code_CLIENT_ID_REQUIRED, Message: "no x-mq-client-id"}
	}
	s.order[id] = append(s.order[id], rpc)
	if s.hook != nil {
		if err := s.hook(rpc, id); err != nil {
			return id, &v2.Status{Code: v2.Code_INTERNAL_SERVER_ERROR, Message: err.Error()}
		}
	}
	return id, nil
}

func (s *v5Server) QueryRoute(ctx context.Context, req *v2.QueryRouteRequest) (*v2.QueryRouteResponse, error) {
	if _, st := s.enter(ctx, "QueryRoute"); st != nil {
		return &v2.QueryRouteResponse{Status: st}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.notFound > 0 {
		s.notFound--
		return &v2.QueryRouteResponse{Status: &v2.Status{Code: v2.Code_TOPIC_NOT_FOUND, Message: "no route"}}, nil
	}
	resp := &v2.QueryRouteResponse{Status: &v2.Status{Code: v2.Code_OK}}
	for i := range s.queues {
		resp.MessageQueues = append(resp.MessageQueues, &v2.MessageQueue{Topic: req.GetTopic(), Id: int32(i),
			Permission: v2.Permission_READ_WRITE, AcceptMessageTypes: []v2.MessageType{v2.MessageType_NORMAL},
			Broker: &v2.Broker{Name: "fake", Id: 0, Endpoints: req.GetEndpoints()}})
	}
	return resp, nil
}

func (s *v5Server) Telemetry(stream v2.MessagingService_TelemetryServer) error {
	id, st := s.enter(stream.Context(), "Telemetry")
	for {
		c, err := stream.Recv()
		if err != nil {
			return nil
		}
		set := c.GetSettings()
		if set == nil {
			continue
		}
		if st != nil {
			if err := stream.Send(&v2.TelemetryCommand{Status: st}); err != nil {
				return err
			}
			continue
		}
		s.mu.Lock()
		s.settings[id] = set
		s.order[id] = append(s.order[id], "Settings")
		s.mu.Unlock()
		if err := stream.Send(&v2.TelemetryCommand{Status: &v2.Status{Code: v2.Code_OK},
			Command: &v2.TelemetryCommand_Settings{Settings: set}}); err != nil {
			return err
		}
	}
}

func (s *v5Server) Heartbeat(ctx context.Context, req *v2.HeartbeatRequest) (*v2.HeartbeatResponse, error) {
	id, st := s.enter(ctx, "Heartbeat")
	if st != nil {
		return &v2.HeartbeatResponse{Status: st}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	set, ok := s.settings[id]
	if !ok {
		return &v2.HeartbeatResponse{Status: &v2.Status{Code: v2.Code_UNRECOGNIZED_CLIENT_TYPE, Message: "no settings"}}, nil
	}
	if set.GetClientType() == v2.ClientType_SIMPLE_CONSUMER && req.GetGroup().GetName() == "" {
		return &v2.HeartbeatResponse{Status: &v2.Status{Code: v2.Code_ILLEGAL_CONSUMER_GROUP, Message: "no group"}}, nil
	}
	s.heartbeats[id] = true
	return &v2.HeartbeatResponse{Status: &v2.Status{Code: v2.Code_OK}}, nil
}

func (s *v5Server) SendMessage(ctx context.Context, req *v2.SendMessageRequest) (*v2.SendMessageResponse, error) {
	if _, st := s.enter(ctx, "SendMessage"); st != nil {
		return &v2.SendMessageResponse{Status: st}, nil
	}
	resp := &v2.SendMessageResponse{Status: &v2.Status{Code: v2.Code_OK}}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range req.GetMessages() {
		if m.GetSystemProperties().GetMessageId() == "" || len(m.GetBody()) == 0 {
			return &v2.SendMessageResponse{Status: &v2.Status{Code: v2.Code_ILLEGAL_MESSAGE_ID, Message: "no id or body"}}, nil
		}
	}
	for _, m := range req.GetMessages() {
		s.ready = append(s.ready, m)
		s.stored++
		resp.Entries = append(resp.Entries, &v2.SendResultEntry{Status: &v2.Status{Code: v2.Code_OK},
			MessageId: m.GetSystemProperties().GetMessageId(), Offset: int64(s.stored)})
	}
	return resp, nil
}

func (s *v5Server) ReceiveMessage(req *v2.ReceiveMessageRequest, stream v2.MessagingService_ReceiveMessageServer) error {
	id, st := s.enter(stream.Context(), "ReceiveMessage")
	send := func(st *v2.Status) error {
		return stream.Send(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Status{Status: st}})
	}
	if st != nil {
		return send(st)
	}
	s.mu.Lock()
	if !s.heartbeats[id] || s.settings[id].GetClientType() != v2.ClientType_SIMPLE_CONSUMER {
		s.mu.Unlock()
		return send(&v2.Status{Code: v2.Code_UNRECOGNIZED_CLIENT_TYPE, Message: "no consumer settings or heartbeat"})
	}
	if req.GetBatchSize() < 1 || req.GetInvisibleDuration() == nil || req.GetGroup().GetName() == "" {
		s.mu.Unlock()
		return send(&v2.Status{Code: v2.Code_BAD_REQUEST, Message: "batch size, invisible duration, group"})
	}
	n := min(int(req.GetBatchSize()), len(s.ready))
	got := s.ready[:n:n]
	s.ready = s.ready[n:]
	out := make([]*v2.Message, n)
	for i, m := range got {
		s.handles++
		h := "h" + strconv.Itoa(s.handles)
		s.inflight[h] = m
		c := *m.GetSystemProperties()
		c.ReceiptHandle = &h
		out[i] = &v2.Message{Topic: m.GetTopic(), SystemProperties: &c, Body: m.GetBody()}
	}
	s.mu.Unlock()
	if n == 0 {
		select {
		case <-stream.Context().Done():
			return stream.Context().Err()
		case <-time.After(s.pollWait):
		}
		return send(&v2.Status{Code: v2.Code_MESSAGE_NOT_FOUND, Message: "no new message"})
	}
	if err := send(&v2.Status{Code: v2.Code_OK}); err != nil {
		return err
	}
	for _, m := range out {
		if err := stream.Send(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Message{Message: m}}); err != nil {
			return err
		}
	}
	return nil
}

func (s *v5Server) AckMessage(ctx context.Context, req *v2.AckMessageRequest) (*v2.AckMessageResponse, error) {
	id, st := s.enter(ctx, "AckMessage")
	if st != nil {
		return &v2.AckMessageResponse{Status: st}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.heartbeats[id] {
		return &v2.AckMessageResponse{Status: &v2.Status{Code: v2.Code_UNRECOGNIZED_CLIENT_TYPE}}, nil
	}
	s.ackCalls++
	resp := &v2.AckMessageResponse{Status: &v2.Status{Code: v2.Code_OK}}
	bad := 0
	for _, e := range req.GetEntries() {
		est := &v2.Status{Code: v2.Code_OK}
		m, ok := s.inflight[e.GetReceiptHandle()]
		switch {
		case !ok || m.GetSystemProperties().GetMessageId() != e.GetMessageId() || req.GetTopic().GetName() != m.GetTopic().GetName():
			est, bad = &v2.Status{Code: v2.Code_INVALID_RECEIPT_HANDLE, Message: fmt.Sprintf("handle %q", e.GetReceiptHandle())}, bad+1
		default:
			delete(s.inflight, e.GetReceiptHandle())
			s.acked[e.GetMessageId()] = true
		}
		resp.Entries = append(resp.Entries, &v2.AckMessageResultEntry{MessageId: e.GetMessageId(), ReceiptHandle: e.GetReceiptHandle(), Status: est})
	}
	if bad > 0 {
		resp.Status = &v2.Status{Code: v2.Code_MULTIPLE_RESULTS}
	}
	return resp, nil
}

func (s *v5Server) NotifyClientTermination(ctx context.Context, _ *v2.NotifyClientTerminationRequest) (*v2.NotifyClientTerminationResponse, error) {
	id, st := s.enter(ctx, "NotifyClientTermination")
	if st == nil {
		s.mu.Lock()
		s.terminated[id] = true
		s.mu.Unlock()
	}
	return &v2.NotifyClientTerminationResponse{Status: &v2.Status{Code: v2.Code_OK}}, nil
}

// snapshot copies what the tests check, under the lock.
func (s *v5Server) snapshot() (order map[string][]string, missing []string, stored, acked, inflight, ackCalls int, terminated int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	order = map[string][]string{}
	for k, v := range s.order {
		order[k] = append([]string(nil), v...)
	}
	return order, append([]string(nil), s.missingMD...), s.stored, len(s.acked), len(s.inflight), s.ackCalls, len(s.terminated)
}
