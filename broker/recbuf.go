package broker

import (
	"math/bits"
	"sync"
)

// Record buffers: a SEND's stored records (the MessageExt encoding,
// codec.AppendMessage) are built in a buffer taken from a size-class pool
// and returned once the writer is done with them (sendJob.Done), so a
// steady produce stream stops allocating (and the GC stops scanning) one
// record-sized buffer per message. The store copies a record into its
// WriteBatch or writes it to the commit log inside Txn.Commit and keeps no
// reference afterwards (Txn.recycle clears them), so the buffer is free
// when the op completes.
const (
	recBufMinShift = 9  // smallest class: 512 bytes
	recBufMaxShift = 16 // largest class: 64 KiB; larger records are not pooled
)

var recBufPools [recBufMaxShift - recBufMinShift + 1]sync.Pool

// recBufClass returns the pool index for a buffer of capacity ≥ n, or -1
// when n is above the largest class.
func recBufClass(n int) int {
	if n <= 1<<recBufMinShift {
		return 0
	}
	c := bits.Len(uint(n-1)) - recBufMinShift
	if c >= len(recBufPools) {
		return -1
	}
	return c
}

// recBuf is a pooled record buffer; the holder travels with it, so
// returning a buffer allocates nothing.
type recBuf struct{ b []byte }

// getRecordBuf returns a holder whose b is empty with capacity ≥ n: a
// pooled buffer of n's size class, or a fresh one of the class's full size.
// Above the largest class the buffer is exactly n and putRecordBuf drops
// it. Any goroutine.
func getRecordBuf(n int) *recBuf {
	c := recBufClass(n)
	if c < 0 {
		return &recBuf{b: make([]byte, 0, n)}
	}
	if r, ok := recBufPools[c].Get().(*recBuf); ok {
		r.b = r.b[:0]
		return r
	}
	return &recBuf{b: make([]byte, 0, 1<<(c+recBufMinShift))}
}

// putRecordBuf returns r to its pool when r.b's capacity is exactly a class
// size (not regrown, not oversized); the caller must hold no other
// reference to r or its bytes. Any goroutine.
func putRecordBuf(r *recBuf) {
	n := cap(r.b)
	if n < 1<<recBufMinShift || n&(n-1) != 0 {
		return
	}
	if c := recBufClass(n); c >= 0 {
		r.b = r.b[:0]
		recBufPools[c].Put(r)
	}
}
