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
// grpcWindowBytes). The gate sits between the handler and dec: a
// request takes a slot before its message is read and gives it back once
// the message is decoded (into the budget of decoded requests, sendBudget)
// or the read failed. With slots = MaxSendInflightBytes / MaxRecvMsgBytes
// the bytes being read stay under MaxSendInflightBytes however many
// connections and streams send at once (800 connections × 1 MiB: see
// PERFORMANCE.md).
//
// No caller waits for ever: a request that waited readGateWait without a
// slot (the slots held by streams whose clients dribble their bytes) is
// read anyway and counted in overflows, so a slow client costs the others
// at most that wait. A request whose context ends while it waits is
// handed to dec at once, which then fails with the context's error. Any
// goroutine; the zero value (no slots) gates nothing.
type readGate struct {
	slots     chan struct{}
	wait      time.Duration
	overflows atomic.Int64 // reads started without a slot after waiting wait
	waited    atomic.Int64 // reads that found every slot taken and waited
	peak      atomic.Int64 // most slots held at once
}

// readGateWait is how long a SendMessage waits for a read slot before it
// is read without one.
const readGateWait = 500 * time.Millisecond

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
	g := &readGate{wait: readGateWait}
	if maxInflight > 0 && maxMsg > 0 {
		g.slots = make(chan struct{}, max(1, maxInflight/int64(maxMsg)))
	}
	return g
}

// decode calls dec(v) holding a slot: it takes one (waiting at most
// g.wait, or until ctx ends), reads, and gives it back.
func (g *readGate) decode(ctx context.Context, dec func(any) error, v any) error {
	if g.slots == nil {
		return dec(v)
	}
	select {
	case g.slots <- struct{}{}:
	default:
		g.waited.Add(1)
		t := time.NewTimer(g.wait)
		select {
		case g.slots <- struct{}{}:
			t.Stop()
		case <-t.C:
			g.overflows.Add(1)
			return dec(v)
		case <-ctx.Done():
			t.Stop()
			return dec(v)
		}
	}
	defer func() { <-g.slots }()
	for n, p := int64(len(g.slots)), g.peak.Load(); n > p && !g.peak.CompareAndSwap(p, n); p = g.peak.Load() {
	}
	return dec(v)
}

// gatedServiceDesc returns MessagingService's description with the
// SendMessage handler reading its request through g (the other methods
// as generated).
func gatedServiceDesc(g *readGate) *grpc.ServiceDesc {
	desc := v2.MessagingService_ServiceDesc
	desc.Methods = slices.Clone(desc.Methods)
	for i := range desc.Methods {
		if desc.Methods[i].MethodName != "SendMessage" {
			continue
		}
		generated := desc.Methods[i].Handler
		desc.Methods[i].Handler = func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
			return generated(srv, ctx, func(v any) error { return g.decode(ctx, dec, v) }, ic)
		}
	}
	return &desc
}
