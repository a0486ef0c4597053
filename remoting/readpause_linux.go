//go:build linux

package remoting

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/panjf2000/gnet/v2"
	"golang.org/x/sys/unix"
)

// How a connection stops being read (gnet v2.9.7 has no per-connection
// read pause; panjf2000/gnet#712 and #722 asked for one and were closed):
//
// Every gnet event loop owns one epoll instance, in level-triggered mode
// (the server never enables gnet's edge-triggered I/O), and registers each
// connection with events EPOLLIN|EPOLLPRI (plus EPOLLOUT while its outbound
// buffer holds bytes) and epoll data = the descriptor. epoll_ctl(MOD) on
// that instance, from the loop's own goroutine, with the same data and
// without EPOLLIN makes the loop stop reading the socket: the kernel keeps
// the bytes, the receive window closes, and the peer's writes block. A MOD
// that adds EPOLLIN back resumes reading. A paused registration asks for
// EPOLLRDHUP, which gnet answers by closing the connection when it comes
// without EPOLLIN: a peer that closes (sends FIN) while paused is closed at
// once, its unread bytes dropped (a RocketMQ client never half-closes a
// connection it still expects answers on). EPOLLHUP and EPOLLERR are
// always reported, so a peer that resets is closed too.
//
// gnet does not export the epoll descriptor. findLoopEpoll finds it once
// per event loop from /proc/self/fdinfo: the eventpoll descriptor that
// watches a connection's descriptor with data equal to that descriptor
// (which also confirms gnet's default, non-poll_opt, data encoding).
//
// gnet itself re-adds EPOLLIN when its outbound buffer fills (write hit
// EAGAIN) or drains again; each such re-arm lets at most one more read
// (gnet's 64 KiB read buffer) into the connection's inbound buffer before
// OnTraffic pauses it again.

// epollReadEvents is gnet's read interest (netpoll.ReadEvents).
const epollReadEvents = unix.EPOLLIN | unix.EPOLLPRI

// findLoopEpoll returns the epoll descriptor of the gnet event loop that
// watches fd, by reading /proc/self/fd and /proc/self/fdinfo. It costs one
// readlink per open descriptor; callers cache the result per event loop.
// Errors: /proc unreadable, or no eventpoll descriptor watches fd with
// gnet's data encoding.
func findLoopEpoll(fd int) (int, error) {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1, fmt.Errorf("remoting: find event loop epoll: %w", err)
	}
	want := []byte(strconv.Itoa(fd))
	wantData := []byte(strconv.FormatInt(int64(fd), 16))
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil || n == fd {
			continue
		}
		if link, err := os.Readlink("/proc/self/fd/" + e.Name()); err != nil || link != "anon_inode:[eventpoll]" {
			continue
		}
		info, err := os.ReadFile("/proc/self/fdinfo/" + e.Name())
		if err == nil && epollWatches(info, want, wantData) {
			return n, nil
		}
	}
	return -1, errors.New("remoting: find event loop epoll: no eventpoll descriptor watches the connection")
}

// epollWatches reports whether an eventpoll fdinfo text has a line
// "tfd: <fd> events: <hex> data: <hex fd> ..." for the wanted descriptor.
func epollWatches(info, fd, data []byte) bool {
	for line := range bytes.Lines(info) {
		f := bytes.Fields(line)
		if len(f) >= 6 && string(f[0]) == "tfd:" && bytes.Equal(f[1], fd) &&
			string(f[4]) == "data:" && bytes.Equal(f[5], data) {
			return true
		}
	}
	return false
}

// setReadInterest makes the event loop watch (read true) or ignore (read
// false) the connection's readable events, keeping EPOLLOUT while gnet
// still has outbound bytes to write. Loop goroutine only: gnet changes the
// same registration on that goroutine, never concurrently with this.
func setReadInterest(epfd int, gc gnet.Conn, read bool) error {
	var ev uint32 = unix.EPOLLRDHUP
	if read {
		ev = epollReadEvents
	}
	if gc.OutboundBuffered() > 0 {
		ev |= unix.EPOLLOUT
	}
	fd := gc.Fd()
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_MOD, fd, &unix.EpollEvent{Events: ev, Fd: int32(fd)}); err != nil {
		return fmt.Errorf("remoting: epoll_ctl mod fd %d: %w", fd, err)
	}
	return nil
}
