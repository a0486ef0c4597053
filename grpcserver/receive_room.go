package grpcserver

import (
	"sync"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/popshim/popshim/broker"
)

// Messages of a ReceiveMessage stream that the client does not read.
// grpc-go's Send returns once a message is queued on the transport and
// blocks the next Send until the client's flow-control window takes the
// queued bytes, so a stream nobody reads holds the messages it converted
// until its client's deadline. 100 such streams of one connection held
// 4 GiB of 4 MiB messages (2026-12-07) while the remoting listener's
// reply bound (--reply-max-bytes) saw none of it. Now:
//
//   - deliver counts the messages it holds against that bound
//     (broker.Service.HoldReply) from their conversion until the delivery
//     ends, plus its largest message once more for the copy grpc-go
//     encodes and keeps on the transport until the client's window takes
//     it: the bodies share the POP's one reply buffer, which is freed only
//     with the last of them (counting each message out as the next Send
//     returned let 100 streams hold 690–1,090 MiB of RSS against a 128 MiB
//     bound). Other reads wait while they fill it (broker/reply_room.go);
//   - a delivery whose Send makes no progress for stuckSendGrace while
//     the bound is reached closes its connection, as remoting closes a
//     connection that reads none of its replies (remoting/replyheld.go):
//     the blocked Send then fails and the messages not sent are made
//     visible again.

// stuckSendGrace is how long a delivery's Send may make no progress while
// the reply bound is reached before its connection is closed.
const stuckSendGrace = 3 * time.Second

// stuckSendRecheck is how soon a stuck Send is looked at again when the
// bound was not reached at stuckSendGrace.
const stuckSendRecheck = time.Second

// heldMessageBytes is a converted message's body and property bytes.
func heldMessageBytes(m *v2.Message) int64 {
	n := int64(len(m.GetBody()))
	for k, v := range m.GetUserProperties() {
		n += int64(len(k) + len(v))
	}
	return n
}

// replyHold is one delivery's held bytes and its stuck-Send watch. Made by
// holdReplies on the stream's goroutine; sent and end run there too, fire
// on a timer goroutine.
type replyHold struct {
	s     *service
	conn  *connInfo
	held  int64 // counted by holdReplies, released by end
	mu    sync.Mutex
	timer *time.Timer // nil: no connection to close
	ended bool        // REQUIRES: mu held
}

// poppedBytes is what a POP's records are held as from the moment the
// core answers (pop's callback, on the goroutine that answers) until
// their conversion: their bodies plus the largest once more. Counting
// them there, before the core gives back the room the read took
// (broker/reply_room.go), leaves no moment in which another read sees
// the room free.
func poppedBytes(recs []broker.PoppedRecord) int64 {
	var n, largest int64
	for i := range recs {
		b := int64(len(recs[i].Msg.Body))
		n += b
		largest = max(largest, b)
	}
	return n + largest
}

// holdReplies counts msgs as held for the stream of conn (nil: a handler
// called without a connection, no watch), taking over pre bytes already
// counted for them (poppedBytes).
func (s *service) holdReplies(conn *connInfo, msgs []*v2.Message, pre int64) *replyHold {
	h := &replyHold{s: s, conn: conn}
	var largest int64
	for _, m := range msgs {
		n := heldMessageBytes(m)
		h.held += n
		largest = max(largest, n)
	}
	h.held += largest
	s.holdBytes(h.held - pre)
	if conn != nil && conn.closeConn != nil {
		h.timer = time.AfterFunc(stuckSendGrace, h.fire)
	}
	return h
}

// holdBytes adds n to the core's held replies and the gauge.
func (s *service) holdBytes(n int64) {
	if n == 0 {
		return
	}
	s.core.Svc.HoldReply(n)
	s.metrics.replyHeldAdd(n)
}

// sent records that a Send returned: the stream made progress, and the
// watch starts again.
func (h *replyHold) sent() {
	h.mu.Lock()
	if h.timer != nil && !h.ended {
		h.timer.Reset(stuckSendGrace)
	}
	h.mu.Unlock()
}

// end releases the delivery's count and stops the watch. Once.
func (h *replyHold) end() {
	h.mu.Lock()
	h.ended = true
	if h.timer != nil {
		h.timer.Stop()
	}
	h.mu.Unlock()
	h.s.holdBytes(-h.held)
}

// fire runs when no Send returned for stuckSendGrace: with the bound
// reached the connection is closed, else it looks again later.
func (h *replyHold) fire() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended {
		return
	}
	if h.s.core.Svc.ReplyRoomLeft() > 0 {
		h.timer.Reset(stuckSendRecheck)
		return
	}
	h.ended = true
	h.s.metrics.slowReceiveClosed()
	h.s.log.Warn().Str("peer", h.conn.peer.String()).Dur("grace", stuckSendGrace).
		Msg("gRPC connection closed: a ReceiveMessage stream took none of its messages while the reply bound (--reply-max-bytes) was reached")
	go h.conn.closeConn()
}
