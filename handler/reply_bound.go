package handler

import (
	"strconv"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

// Requests whose answer can be large wait for no reply room: they answer
// at once. A Java broker writes VIEW_MESSAGE_BY_ID and QUERY_MESSAGE
// answers as zero-copy file regions over its mapped commit log, and admin
// tables from its own heap; popshim copies each answer into a frame that
// stays in memory until the client reads it. Clients that pipelined such
// requests and read nothing took popshim past 4 GiB (200 connections × 15
// VIEW_MESSAGE_BY_ID of 4 MiB messages; 20 × 50 GET_ALL_TOPIC_CONFIG of
// 12 MB with 30,000 topics, 2026-12-07) while --reply-max-bytes bounded
// only POP and PULL. While that bound is reached (broker.Service.
// ReplyRoomLeft, which counts remoting's held replies, POP answers waiting
// for their checkpoint and gRPC deliveries) these codes answer SYSTEM_BUSY
// (2) with replyBoundRemark instead of building the answer; clients retry
// (mqadmin reports the remark). Small answers are not refused: a client
// that keeps sending while reading nothing is closed after 3 s
// (remoting/replyheld.go).

// replyBoundRemark is the remark of a SYSTEM_BUSY answered because the
// reply bound is reached.
func replyBoundRemark(left int64) string {
	return "[REPLY_BOUND]broker busy: answers clients have not read fill --reply-max-bytes (room " +
		strconv.FormatInt(left, 10) + " bytes), retry later"
}

// submitLargeRead queues job, which builds a large answer to req on the
// reader pool, behind the same check made when it runs: requests a
// connection pipelined all pass the check at dispatch before the first
// answer is counted (60 VIEW_MESSAGE_BY_ID held 11 MiB against a 1 MiB
// bound that way), so the reader looks again, and job runs holding reply
// room (broker.Service.WithReplyRoom). False when the pool's queue
// is full (the caller answers SYSTEM_BUSY). Event-loop goroutine.
func (b *Broker) submitLargeRead(c remoting.Conn, req *codec.Command, job func()) bool {
	return b.SubmitRead(func() {
		if !b.Svc.WithReplyRoom(b.Settings.MaxPopBytes, job) {
			reply.Code(c, req, codec.SystemBusy, replyBoundRemark(b.Svc.ReplyRoomLeft()))
		}
	})
}

// largeReply wraps h, the handler of a code whose answer can be large,
// with the reply-bound check above. Event-loop goroutine, as h.
func (b *Broker) largeReply(h remoting.HandlerFunc) remoting.HandlerFunc {
	return func(c remoting.Conn, req *codec.Command) {
		if left := b.Svc.ReplyRoomLeft(); left <= 0 {
			reply.Code(c, req, codec.SystemBusy, replyBoundRemark(left))
			return
		}
		h(c, req)
	}
}

// tableReply wraps h, a handler that encodes a whole table (every topic,
// subscription group or producer): it runs on the reader pool behind the
// checks of largeReply and submitLargeRead instead of on the event loop,
// and SYSTEM_BUSY answers when the pool's queue is full. With 30,000
// topics one GET_ALL_TOPIC_CONFIG took ~100 ms on the event loop, and
// 1,000 of them kept a healthy SEND on the same loop waiting 96.7 s
// (2026-12-07); a Java broker runs admin requests on its own executor
// (adminBrokerExecutor). Event-loop goroutine.
func (b *Broker) tableReply(h remoting.HandlerFunc) remoting.HandlerFunc {
	return b.largeReply(func(c remoting.Conn, req *codec.Command) {
		if !b.submitLargeRead(c, req, func() { h(c, req) }) {
			reply.Code(c, req, codec.SystemBusy, reply.BusyRemark)
		}
	})
}
