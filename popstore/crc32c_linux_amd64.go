//go:build linux && amd64

package popstore

// RocksDB checksums every byte it writes with CRC32C: each WAL record
// (log::Writer::EmitPhysicalRecord), each blob record (BlobLogRecord) and
// each table block (ComputeBuiltinChecksum), and it checks the blob
// record again on every read. Debian's librocksdb 7.8.3 is built portable,
// without SSE4.2, so its rocksdb::crc32c::Extend is the table-driven
// software loop: 13 µs per 16 KiB (1.26 GB/s) on the bench machine, twice
// per stored body (WAL, then blob file at flush). Every caller inside the
// library reaches Extend through its PLT, so a definition of the same
// symbol in the executable takes its place for the whole process (ELF
// symbol interposition); the one below uses the CPU's CRC32 instruction,
// 1.8 µs per 16 KiB, and returns the same value for the same input
// (TestCRC32CMatchesCastagnoli). The library stays Debian's, unchanged.
// Without SSE4.2 (no x86-64 CPU since 2008 lacks it) the call goes on to
// the library's own Extend, found with dlsym(RTLD_NEXT) (or, if even that
// fails, a bitwise loop).

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef uint32_t (*popshim_crc32c_fn)(uint32_t, const char*, size_t);

static popshim_crc32c_fn popshim_crc32c_next;
static int popshim_crc32c_state; // 0: not chosen yet, 1: CRC32 instruction, 2: the library's
static uint64_t popshim_crc32c_calls;

__attribute__((target("sse4.2")))
static uint32_t popshim_crc32c_sse42(uint32_t crc, const char* p, size_t n) {
	uint64_t l = crc ^ 0xffffffffu;
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		l = __builtin_ia32_crc32di(l, w);
		p += 8;
		n -= 8;
	}
	uint32_t c = (uint32_t)l;
	while (n > 0) {
		c = __builtin_ia32_crc32qi(c, (unsigned char)*p);
		p++;
		n--;
	}
	return c ^ 0xffffffffu;
}

// Bit by bit (reflected polynomial 0x82F63B78): only when the CPU lacks
// SSE4.2 and the library's own Extend cannot be found.
static uint32_t popshim_crc32c_bitwise(uint32_t crc, const char* p, size_t n) {
	uint32_t c = crc ^ 0xffffffffu;
	while (n-- > 0) {
		c ^= (unsigned char)*p++;
		for (int k = 0; k < 8; k++) {
			c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
		}
	}
	return c ^ 0xffffffffu;
}

// Chooses the implementation once; also called from Extend in case
// RocksDB checksums something before this executable's constructors run.
// Racing first calls choose the same.
__attribute__((constructor))
static void popshim_crc32c_init(void) {
	if (__atomic_load_n(&popshim_crc32c_state, __ATOMIC_ACQUIRE) != 0) {
		return;
	}
	__builtin_cpu_init();
	int hw = __builtin_cpu_supports("sse4.2");
	popshim_crc32c_fn next = (popshim_crc32c_fn)dlsym(RTLD_NEXT, "_ZN7rocksdb6crc32c6ExtendEjPKcm");
	__atomic_store_n(&popshim_crc32c_next, next, __ATOMIC_RELAXED);
	__atomic_store_n(&popshim_crc32c_state, hw ? 1 : 2, __ATOMIC_RELEASE);
}

// rocksdb::crc32c::Extend(uint32_t init_crc, const char* data, size_t n)
// (util/crc32c.h): the CRC32C of data continuing from init_crc.
uint32_t _ZN7rocksdb6crc32c6ExtendEjPKcm(uint32_t crc, const char* p, size_t n) {
	__atomic_fetch_add(&popshim_crc32c_calls, 1, __ATOMIC_RELAXED);
	int state = __atomic_load_n(&popshim_crc32c_state, __ATOMIC_ACQUIRE);
	if (state == 0) {
		popshim_crc32c_init();
		state = __atomic_load_n(&popshim_crc32c_state, __ATOMIC_ACQUIRE);
	}
	if (state == 1) {
		return popshim_crc32c_sse42(crc, p, n);
	}
	popshim_crc32c_fn next = __atomic_load_n(&popshim_crc32c_next, __ATOMIC_RELAXED);
	return next != NULL ? next(crc, p, n) : popshim_crc32c_bitwise(crc, p, n);
}

static uint64_t popshim_crc32c_count(void) {
	return __atomic_load_n(&popshim_crc32c_calls, __ATOMIC_RELAXED);
}

static int popshim_crc32c_uses_hw(void) {
	popshim_crc32c_init();
	return popshim_crc32c_state == 1;
}

// The portable fallback, for tests.
static uint32_t popshim_crc32c_portable(uint32_t crc, const char* p, size_t n) {
	return popshim_crc32c_bitwise(crc, p, n);
}

// The library's own Extend (0 when not found), for tests.
static uint32_t popshim_crc32c_library(uint32_t crc, const char* p, size_t n, int* found) {
	*found = popshim_crc32c_next != NULL;
	return *found ? popshim_crc32c_next(crc, p, n) : 0;
}
*/
import "C"

import "unsafe"

// CRC32CStats reports whether RocksDB's CRC32C runs on the CPU's CRC32
// instruction (popshim's interposed rocksdb::crc32c::Extend; false: the
// library's software loop) and how many times RocksDB has called it in
// this process. Any goroutine.
func CRC32CStats() (hardware bool, calls uint64) {
	return C.popshim_crc32c_uses_hw() != 0, uint64(C.popshim_crc32c_count())
}

// cBytes is b as a C pointer and length (nil for an empty b), for the
// calls below; b must stay alive across the call.
func cBytes(b []byte) (*C.char, C.size_t) {
	if len(b) == 0 {
		return nil, 0
	}
	return (*C.char)(unsafe.Pointer(&b[0])), C.size_t(len(b))
}

// crc32cExtend calls the process's rocksdb::crc32c::Extend, the function
// RocksDB's own callers reach (tests compare it with hash/crc32).
func crc32cExtend(crc uint32, b []byte) uint32 {
	p, n := cBytes(b)
	return uint32(C._ZN7rocksdb6crc32c6ExtendEjPKcm(C.uint32_t(crc), p, n))
}

// crc32cPortable is the bitwise fallback (tests compare it too).
func crc32cPortable(crc uint32, b []byte) uint32 {
	p, n := cBytes(b)
	return uint32(C.popshim_crc32c_portable(C.uint32_t(crc), p, n))
}

// crc32cLibrary calls librocksdb's own rocksdb::crc32c::Extend, the one
// the interposed definition replaces; ok is false when it was not found.
func crc32cLibrary(crc uint32, b []byte) (sum uint32, ok bool) {
	p, n := cBytes(b)
	var found C.int
	sum = uint32(C.popshim_crc32c_library(C.uint32_t(crc), p, n, &found))
	return sum, found != 0
}
