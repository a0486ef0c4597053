package popstore

/*
#include <malloc.h>
*/
import "C"

import (
	"os"
	"sync"
)

// mallocMmapThreshold is the size, bytes, from which glibc's malloc serves
// an allocation with its own mmap and gives it back to the kernel at free.
// RocksDB's large allocations (memtable arena blocks, WriteBatch buffers
// of big SENDs, flush and compaction buffers) are C heap: by default glibc
// raises this threshold to the size of every mmapped block freed, up to 32
// MiB, so after the first flush a memtable's blocks come from malloc's
// arenas, which keep freed memory resident and fragment. Under 800
// connections each with one 1 MiB SEND in flight (2026-12-05, 2 vCPU) the
// C heap held ~430 MiB with the dynamic threshold and ~190 MiB with it
// fixed at 1 MiB (two 128 MiB messages memtables included).
const mallocMmapThreshold = 1 << 20

var mallocOnce sync.Once

// tuneMalloc fixes glibc's mmap threshold at mallocMmapThreshold once per
// process, unless the operator set MALLOC_MMAP_THRESHOLD_ (glibc's own
// variable wins). Called by Open before RocksDB allocates; any goroutine.
func tuneMalloc() {
	mallocOnce.Do(func() {
		if _, set := os.LookupEnv("MALLOC_MMAP_THRESHOLD_"); set {
			return
		}
		C.mallopt(C.M_MMAP_THRESHOLD, C.int(mallocMmapThreshold))
	})
}

// freshBlockMmapped reports whether a C allocation of n bytes made right
// after another of n bytes was freed is served by mmap (as
// mallocMmapThreshold wants) rather than from malloc's arenas (glibc's
// dynamic threshold after that free). It allocates and frees; tests call it
// to check tuneMalloc took effect. Any goroutine.
func freshBlockMmapped(n int) bool {
	C.free(C.malloc(C.size_t(n)))
	before := C.mallinfo2().hblkhd
	p := C.malloc(C.size_t(n))
	after := C.mallinfo2().hblkhd
	C.free(p)
	return after >= before+C.size_t(n)
}
