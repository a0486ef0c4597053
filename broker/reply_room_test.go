package broker

import (
	"sync"
	"testing"
)

// Reads take the reply room under one lock: each takes at most what the
// ones before it left, never more than the bound in sum however many
// look at once, and what a read gives back is there for the next.
// Before, every reader looked and then took, so four readers each took
// the whole room.
func TestReserveReplyTakesRoomOnce(t *testing.T) {
	const bound = 1 << 20
	s := &Service{Settings: &Settings{ReplyRoom: func() int64 { return bound }}}
	if got := s.reserveReply(768 << 10); got != 768<<10 {
		t.Fatalf("first read took %d, want %d", got, 768<<10)
	}
	if got := s.reserveReply(768 << 10); got != 256<<10 {
		t.Fatalf("second read took %d, want the %d left", got, 256<<10)
	}
	if got := s.reserveReply(1); got != 0 {
		t.Fatalf("a read took %d with no room left", got)
	}
	s.releaseReply(768 << 10)
	if left := s.ReplyRoomLeft(); left != 768<<10 {
		t.Fatalf("room left %d after a release, want %d", left, 768<<10)
	}
	s.releaseReply(256 << 10)

	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		taken int64
	)
	start := make(chan struct{})
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			n := s.reserveReply(100 << 10)
			mu.Lock()
			taken += int64(n)
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	if taken != bound {
		t.Fatalf("64 concurrent reads took %d bytes of a %d-byte room", taken, bound)
	}
	if left := s.ReplyRoomLeft(); left != 0 {
		t.Fatalf("room left %d, want 0", left)
	}
}

// An answer built with WithReplyRoom holds its room while it is built,
// shows in ReadingReplyBytes for the memory limiter, gives the room back
// after, and is not built at all while the bound is reached.
func TestWithReplyRoomHoldsWhileBuilding(t *testing.T) {
	const bound = 1 << 20
	s := &Service{Settings: &Settings{ReplyRoom: func() int64 { return bound }}}
	var during, inner int64
	ran := s.WithReplyRoom(768<<10, func() {
		during = s.ReadingReplyBytes()
		inner = int64(s.reserveReply(bound))
		s.releaseReply(inner)
	})
	if !ran || during != 768<<10 || inner != 256<<10 {
		t.Fatalf("ran %v, held %d while building (want %d), a read beside it took %d (want %d)", ran, during, 768<<10, inner, 256<<10)
	}
	if got := s.ReadingReplyBytes(); got != 0 {
		t.Fatalf("%d bytes still held after the build", got)
	}
	n := s.reserveReply(bound)
	if s.WithReplyRoom(1, func() { t.Fatal("built with no room left") }) {
		t.Fatal("WithReplyRoom ran with the bound reached")
	}
	s.releaseReply(int64(n))
}
