package client

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/popshim/popshim/codec"
)

// readBufferSize is the client's read buffer: frames up to this size
// (every ACK, CHANGE and heartbeat reply) are decoded in place in it.
const readBufferSize = 64 << 10

// readLoop reads frames, completes requests by opaque and answers server
// requests. Every length is checked against MaxFrameBytes before reading.
// A reply of the usual ACK shape (codec.CanonicalResponseHead) to a
// request sent with InvokePreparedHead is completed from its head alone;
// every other frame is decoded once, in full, by DecodeFrame.
func (c *Conn) readLoop() {
	defer c.wg.Done()
	br := bufio.NewReaderSize(c.nc, readBufferSize)
	var big []byte // frames longer than the read buffer, reused
	for {
		word, err := br.Peek(4)
		if err != nil {
			c.fail(readErr(err))
			return
		}
		if _, err := codec.PeekFrame(word, c.opts.MaxFrameBytes); err != nil {
			c.fail(err)
			return
		}
		size := int(binary.BigEndian.Uint32(word)) + 4
		var frame []byte
		inPlace := size <= br.Size()
		if inPlace {
			// Decoded in place: handle keeps nothing of frame (decoded
			// commands own their memory), so it is discarded right after.
			if frame, err = br.Peek(size); err != nil {
				c.fail(readErr(err))
				return
			}
		} else {
			if cap(big) < size {
				big = make([]byte, size)
			}
			frame = big[:size]
			if _, err := io.ReadFull(br, frame); err != nil {
				c.fail(readErr(err))
				return
			}
		}
		if !c.handle(frame) {
			return
		}
		if inPlace {
			_, _ = br.Discard(size) // cannot fail: Peek returned size bytes
		}
	}
}

// handle completes or serves one whole frame; false when the frame did not
// decode and the client is closed.
func (c *Conn) handle(frame []byte) bool {
	if head, ok := codec.CanonicalResponseHead(frame); ok && head.IsResponse() {
		c.mu.Lock()
		e, ok := c.pending.take(head.Opaque)
		c.mu.Unlock()
		switch {
		case !ok:
			c.log.Debug().Int32("opaque", head.Opaque).Int32("code", head.Code).Msg("response without a waiting request")
			return true
		case e.head != nil:
			e.head.HandleHead(head, nil)
			return true
		}
		resp, err := codec.DecodeFrame(frame)
		if err != nil { // unreachable: DecodeFrame decodes every frame CanonicalResponseHead accepts
			c.fail(err)
			e.cb(nil, err)
			return false
		}
		e.cb(resp, nil)
		return true
	}
	cmd, err := codec.DecodeFrame(frame)
	if err != nil {
		c.fail(err)
		return false
	}
	if cmd.IsResponse() {
		c.complete(cmd)
	} else {
		c.serve(cmd)
	}
	return true
}

func readErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("client: connection closed by peer: %w", net.ErrClosed)
	}
	if errors.Is(err, syscall.ECONNRESET) {
		// A reset is the peer closing with unread data: the same loss to callers.
		return fmt.Errorf("client: connection reset by peer: %w: %w", net.ErrClosed, err)
	}
	return fmt.Errorf("client: read: %w", err)
}

func (c *Conn) complete(resp *codec.Command) {
	c.mu.Lock()
	e, ok := c.pending.take(resp.Opaque)
	c.mu.Unlock()
	if !ok {
		c.log.Debug().Int32("opaque", resp.Opaque).Int32("code", resp.Code).Msg("response without a waiting request")
		return
	}
	if e.head != nil {
		e.head.HandleHead(codec.ResponseHead{Code: resp.Code, Opaque: resp.Opaque, Flag: resp.Flag, Remark: resp.Remark}, nil)
		return
	}
	e.cb(resp, nil)
}

func (c *Conn) serve(req *codec.Command) {
	var resp *codec.Command
	if c.opts.OnRequest != nil {
		resp = c.opts.OnRequest(req)
	} else if !req.IsOneway() {
		resp = codec.NewResponse(req, codec.RequestCodeNotSupported,
			fmt.Sprintf(" request type %d not supported", req.Code))
	}
	if resp == nil || req.IsOneway() {
		return
	}
	resp.Opaque = req.Opaque
	resp.Flag |= codec.FlagResponse
	_ = c.send(resp, nil)
}
