package broker

import (
	"math"
	"time"

	"github.com/popshim/popshim/broker/longpoll"
)

// Reads wait while clients do not read their replies. The remoting
// listener bounds the reply bytes it holds for clients that have not read
// them (--reply-max-bytes, remoting/replyheld.go). A POP or PULL whose
// reply would add to them reads no message while that bound is reached:
// it is run again every replyRoomRetry until its poll ends, then answered
// as an empty poll (POLLING_TIMEOUT for POP, PULL_NOT_FOUND for a
// suspended PULL), so memory stays near the bound instead of growing with
// every consumer that stops reading. When its connection closes meanwhile
// it stops at once, unanswered and having read nothing (retryForRoom).
// While there is room, a read takes at most that room (and at least one
// message), and the room it took counts from before its read until its
// answer is counted where it goes (after a POP's checkpoint write); so
// the reader pool adds at most one message per reader past the bound.

// replyRoomRetry is how long a read that found no reply room waits before
// it looks again.
const replyRoomRetry = 100 * time.Millisecond

// reserveReply takes up to limit bytes of reply room for one read and
// returns how many it took: limit, capped by ReplyRoomLeft; 0 when there
// is no room. The taken bytes count in Service.replyPending until the
// caller gives them back (releaseReply), which it does once the answer is
// counted where it goes: the remoting listener's held replies, or an
// adapter's HoldReply. Look and take happen under roomMu: when every
// reader looked first and took later, four readers each took the whole
// room and 4 gRPC connections × 25 unread streams held 239 MiB against a
// 128 MiB bound (2026-12-07). Any goroutine.
func (s *Service) reserveReply(limit int) int {
	s.roomMu.Lock()
	defer s.roomMu.Unlock()
	room := s.ReplyRoomLeft()
	if room <= 0 {
		return 0
	}
	n := min(int64(limit), room)
	s.replyPending.Add(n)
	return int(n)
}

// WithReplyRoom runs build, which answers a request whose answer size is
// known only once built (an admin table, messages looked up by id or
// key), while holding up to limit bytes of reply room (reserveReply);
// build must give its answer before it returns, so the listener counts
// it before the room goes back. Readers that build such answers at once
// take the room in turn, and the memory limiter sees them
// (ReadingReplyBytes): with 30,000 topics, 1,000 pipelined
// GET_ALL_TOPIC_CONFIG of 12 MB each, built four at a time, raised the Go
// memory limit to 662 MiB (2026-12-07). False, build not run, when the
// bound is reached. Reader goroutine.
func (s *Service) WithReplyRoom(limit int, build func()) bool {
	n := s.reserveReply(limit)
	if n == 0 {
		return false
	}
	defer s.releaseReply(int64(n))
	build()
	return true
}

// ReadingReplyBytes returns the reply room reads hold now (reserveReply):
// answers being read or built, and POP answers waiting for their
// checkpoint write. Any goroutine.
func (s *Service) ReadingReplyBytes() int64 { return s.replyPending.Load() }

// releaseReply gives back n bytes taken by reserveReply. Any goroutine.
func (s *Service) releaseReply(n int64) {
	if n != 0 {
		s.replyPending.Add(-n)
	}
}

// ReplyRoomLeft returns how many more bytes of answers may be held for
// clients before reads wait: Settings.ReplyRoom (the remoting listener's
// room under --reply-max-bytes) less the POP answers waiting for their
// checkpoint write and the answers another protocol's adapter holds
// (HoldReply); math.MaxInt64 when Settings.ReplyRoom is nil (no bound).
// Zero or negative: the bound is reached. Any goroutine.
func (s *Service) ReplyRoomLeft() int64 {
	if s.Settings.ReplyRoom == nil {
		return math.MaxInt64
	}
	return s.Settings.ReplyRoom() - s.replyPending.Load() - s.replyOut.Load()
}

// HoldReply adds n bytes (negative: releases them) to the answers an
// adapter other than remoting holds for a client that has not taken them
// yet: the gRPC endpoint's ReceiveMessage messages from their conversion
// until their delivery ends (grpcserver/receive_room.go). They
// count against the same bound as remoting's held replies, so reads wait
// while a v5 client's streams are not read (100 unread streams of one
// connection held 4 GiB before, 2026-12-07). Any goroutine.
func (s *Service) HoldReply(n int64) { s.replyOut.Add(n) }

// HeldReplyBytes returns the bytes HoldReply counts now. Any goroutine.
func (s *Service) HeldReplyBytes() int64 { return s.replyOut.Load() }

// retryForRoom runs again after replyRoomRetry, unless the poll ends
// (deadlineMillis, broker clock) before then: false when the caller must
// answer now. The wait is held in the long-poll registry's connection
// index (longpoll.Registry.Wait): when connection connID closes meanwhile
// (ConnClosed), drop (nil: nothing) runs at once instead and the request
// neither runs again nor is answered, as a parked poll of that connection.
// Reader goroutine.
func (s *Service) retryForRoom(connID uint64, deadlineMillis int64, again, drop func()) bool {
	if s.nowMillis()+replyRoomRetry.Milliseconds() >= deadlineMillis {
		return false
	}
	return s.Polls.Wait(&longpoll.Poll{ConnID: connID, OnExpire: again, OnDrop: drop}, replyRoomRetry)
}
