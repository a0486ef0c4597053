package remoting

import (
	"sync"
	"sync/atomic"
)

// frameBuf is one encoded reply frame. It is owned by the goroutine that
// encoded it until it is queued on a conn, then by that conn's flusher, then
// by gnet until the write callback returns it to the pool.
type frameBuf struct {
	b   []byte
	off int // bytes of b already sent by a partial direct send (direct.go)
	// held is the Server counter a large reply counts in until putFrame
	// (replyheld.go), nil when it counts nowhere; heldN is what it added.
	held  *atomic.Int64
	heldN int64
}

// maxPooledFrame is the largest buffer capacity, in bytes, kept for reuse;
// larger buffers (big POP bodies) are left to the garbage collector so the
// pool does not pin megabytes per idle entry.
const maxPooledFrame = 1 << 20

var framePool = sync.Pool{New: func() any { return &frameBuf{b: make([]byte, 0, 512)} }}

// getFrame returns an empty buffer from the pool. Any goroutine may call it.
func getFrame() *frameBuf {
	f := framePool.Get().(*frameBuf)
	f.b, f.off = f.b[:0], 0
	return f
}

// putFrame returns f to the pool. The caller must be the buffer's last user:
// for a buffer handed to gnet that is the write callback.
func putFrame(f *frameBuf) {
	if f.held != nil {
		f.held.Add(-f.heldN)
		f.held, f.heldN = nil, 0
	}
	if cap(f.b) > maxPooledFrame {
		return
	}
	framePool.Put(f)
}
