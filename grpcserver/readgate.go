package grpcserver

import (
	"context"
	"slices"
	"sync/atomic"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
)

// readGate bounds how many SendMessage requests grpc-go reads off the
// connections at once. grpc-go sizes a request only when the handler
// asks for it (the generated handler's dec), and then lets the whole
// message in at once; a request whose handler has not asked yet holds at
// most the stream's flow-control window (a fixed 64 KiB:
// grpcWindowBytes). The gate sits in front of the generated handler: a
// request takes a slot before its message is read and gives it back once
// the message is decoded (into the budget of decoded requests, sendBudget)
// or the read failed. With slots = MaxSendInflightBytes / MaxRecvMsgBytes
// the bytes being read stay under MaxSendInflightBytes however many
// connections and streams send at once.
//
// A request that finds no slot within readGateWait (or whose context ends
// while it waits) is answered TOO_MANY_REQUESTS without its message being
// read, as one over the decoded budget is; the v5 clients back off and
// retry. Reading it anyway after a wait let a 1 MiB flood from 200
// connections × 16 streams through (2.9 GB peak, 2026-12-05). Any
// goroutine; the zero value (no slots) gates nothing.
type readGate struct {
	slots   chan struct{}
	wait    time.Duration
	maxMsg  int64        // MaxRecvMsgBytes: what one read may take
	refused atomic.Int64 // requests answered TOO_MANY_REQUESTS unread
	waited  atomic.Int64 // requests that found every slot taken and waited
	waiting atomic.Int64 // requests waiting for a slot now
	peak    atomic.Int64 // most slots held at once
}

// heldBytes bounds the request bytes behind the gate now: a whole
// message for each read in progress, and a stream window (what grpc-go
// has already received) for each request waiting for a slot. The memory
// limit counts them as held, not as broker state (stack/memlimit.go):
// without them 3,200 waiting 1 MiB SendMessages (200 MiB of windows) made
// the limit rise to its ceiling. Any goroutine.
func (g *readGate) heldBytes() int64 {
	if g.slots == nil {
		return 0
	}
	return int64(len(g.slots))*g.maxMsg + g.waiting.Load()*grpcWindowBytes
}

// readGateWait is how long a SendMessage waits for a read slot before it
// is answered TOO_MANY_REQUESTS unread.
const readGateWait = time.Second

// grpcWindowBytes is the stream flow-control window the endpoint
// advertises (grpc.InitialWindowSize): what a client may send on a stream
// before its handler reads. Setting it turns off grpc-go's BDP
// estimation, which grew the windows to megabytes so that a whole 1 MiB
// request arrived before any handler ran (a flood of them peaked at
// ~1.2 GB, 2026-12-05).
const grpcWindowBytes = 64 << 10

// grpcConnWindowBytes is the connection's window
// (grpc.InitialConnWindowSize), bytes in transit on one connection.
const grpcConnWindowBytes = 1 << 20

// newReadGate returns a gate of maxInflight / maxMsg slots (at least 1),
// or a gate of none when maxInflight <= 0 (no bound).
func newReadGate(maxInflight int64, maxMsg int) *readGate {
	g := &readGate{wait: readGateWait, maxMsg: int64(maxMsg)}
	if maxInflight > 0 && maxMsg > 0 {
		g.slots = make(chan struct{}, max(1, maxInflight/int64(maxMsg)))
	}
	return g
}

// take reserves a slot, waiting at most g.wait (or until ctx ends); it
// reports false when it got none. On true the caller must give it back.
func (g *readGate) take(ctx context.Context) bool {
	if g.slots == nil {
		return true
	}
	select {
	case g.slots <- struct{}{}:
	default:
		g.waited.Add(1)
		g.waiting.Add(1)
		defer g.waiting.Add(-1)
		t := time.NewTimer(g.wait)
		defer t.Stop()
		select {
		case g.slots <- struct{}{}:
		case <-t.C:
			g.refused.Add(1)
			return false
		case <-ctx.Done():
			g.refused.Add(1)
			return false
		}
	}
	for n, p := int64(len(g.slots)), g.peak.Load(); n > p && !g.peak.CompareAndSwap(p, n); p = g.peak.Load() {
	}
	return true
}

// give returns a slot take reserved.
func (g *readGate) give() {
	if g.slots != nil {
		<-g.slots
	}
}

// gatedServiceDesc returns MessagingService's description with the
// SendMessage handler behind g (the other methods as generated): the
// generated handler runs holding a slot, given back as soon as the
// request is decoded; without a slot the call goes through the
// interceptors with an empty request and is answered TOO_MANY_REQUESTS.
func gatedServiceDesc(g *readGate) *grpc.ServiceDesc {
	desc := v2.MessagingService_ServiceDesc
	desc.Methods = slices.Clone(desc.Methods)
	for i := range desc.Methods {
		if desc.Methods[i].MethodName != "SendMessage" {
			continue
		}
		generated := desc.Methods[i].Handler
		desc.Methods[i].Handler = func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
			if !g.take(ctx) {
				refuse := func(context.Context, any) (any, error) { return tooManyReads(), nil }
				if ic == nil {
					return refuse(ctx, nil)
				}
				info := &grpc.UnaryServerInfo{Server: srv, FullMethod: v2.MessagingService_SendMessage_FullMethodName}
				return ic(ctx, &v2.SendMessageRequest{}, info, refuse)
			}
			held := true
			defer func() {
				if held {
					g.give()
				}
			}()
			return generated(srv, ctx, func(v any) error {
				err := dec(v)
				if held {
					held = false
					g.give()
				}
				return err
			}, ic)
		}
	}
	return &desc
}

// tooManyReads is the answer to a SendMessage that found no read slot.
func tooManyReads() *v2.SendMessageResponse {
	return &v2.SendMessageResponse{Status: NewStatus(v2.Code_TOO_MANY_REQUESTS,
		"too many send requests being read on the gRPC port, retry later")}
}
