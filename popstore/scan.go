package popstore

// One cgo call per range read. Going through grocksdb's Iterator, a read
// of n records crossed into C about 4n+8 times (create the options and the
// iterator, Seek, then Valid, Key, Value and Next per record, then Err,
// Close and Destroy), each crossing an entersyscall/exitsyscall pair, and
// allocated a Slice per Key and Value plus a copy per record. scanRange
// does the whole loop in C and copies the values into one Go buffer.

/*
#cgo LDFLAGS: -lrocksdb
#include <stdint.h>
#include <string.h>
#include "rocksdb/c.h"

enum { scan_end = 0, scan_count = 1, scan_bytes = 2, scan_room = 3 };

enum { ref_len = 12 };

// popshim_scan copies the values of [start, upper) of cf, in key order,
// into buf (capacity cap) and their lengths into lens, stopping before the
// record that would take the total past max_bytes (the first record is
// always taken when first_free is set), after max_count records, or before
// a value that does not fit buf (its size in *need). A value of ref_len
// bytes is a commit-log reference and counts against max_bytes as the
// size it names (its last 4 bytes); *size is the total so counted. *last
// is the key's last 8 bytes (big endian) of the last record copied. It
// returns how many were copied and why it stopped; *err is RocksDB's
// error, to be freed.
static int popshim_scan(rocksdb_t* db, rocksdb_column_family_handle_t* cf,
		const char* start, size_t start_len, const char* upper, size_t upper_len,
		int max_count, size_t max_bytes, int first_free,
		char* buf, size_t cap, size_t* lens, uint64_t* last, size_t* need,
		size_t* size, int* stop, char** err) {
	rocksdb_set_perf_level(rocksdb_disable);
	rocksdb_readoptions_t* ro = rocksdb_readoptions_create();
	rocksdb_readoptions_set_iterate_upper_bound(ro, upper, upper_len);
	rocksdb_iterator_t* it = rocksdb_create_iterator_cf(db, ro, cf);
	int n = 0;
	size_t used = 0, counted = 0;
	*stop = scan_end;
	for (rocksdb_iter_seek(it, start, start_len); rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
		if (n >= max_count) {
			*stop = scan_count;
			break;
		}
		size_t vlen = 0, klen = 0;
		const char* v = rocksdb_iter_value(it, &vlen);
		size_t cost = vlen;
		if (vlen == ref_len) {
			const unsigned char* r = (const unsigned char*)v + 8;
			cost = (size_t)r[0] << 24 | (size_t)r[1] << 16 | (size_t)r[2] << 8 | r[3];
		}
		if ((n > 0 || !first_free) && counted + cost > max_bytes) {
			*stop = scan_bytes;
			break;
		}
		if (used + vlen > cap) {
			*need = vlen;
			*stop = scan_room;
			break;
		}
		const unsigned char* k = (const unsigned char*)rocksdb_iter_key(it, &klen);
		if (klen >= 8) {
			uint64_t x = 0;
			for (size_t i = klen - 8; i < klen; i++) {
				x = x << 8 | k[i];
			}
			*last = x;
		}
		memcpy(buf + used, v, vlen);
		lens[n++] = vlen;
		used += vlen;
		counted += cost;
	}
	*size = counted;
	rocksdb_iter_get_error(it, err);
	rocksdb_iter_destroy(it);
	rocksdb_readoptions_destroy(ro);
	return n;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/linxGnu/grocksdb"
)

// Why scanRange stopped (popshim_scan's stop values).
const (
	scanEnd   = C.scan_end   // no more keys below the upper bound
	scanCount = C.scan_count // maxCount records copied
	scanBytes = C.scan_bytes // the next record would pass maxBytes
	scanRoom  = C.scan_room  // the next record does not fit buf
)

// cObject returns the C object a grocksdb handle wraps: its first field
// (grocksdb v1.7.14, pinned in go.mod, keeps it there in DB and
// ColumnFamilyHandle and offers no accessor). TestScanRangeMatchesIterator
// fails if that layout changes.
func cObject[T any](h *T) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(h)) }

// scanResult is what one scanRange call copied.
type scanResult struct {
	n    int    // records copied into buf, lengths in lens[:n]
	size int    // the records' total size, commit-log references counted as what they name
	last uint64 // last 8 key bytes of the last record copied (n > 0)
	need int    // scanRoom: the size of the record that did not fit
	stop int    // scanEnd, scanCount, scanBytes or scanRoom
}

// scanRange copies the values of [start, upper) of cf in key order into
// buf (as many as fit its capacity) and their lengths into lens (at most
// len(lens) records), stopping before the total would pass maxBytes (≤ 0:
// nothing but a free first record) unless firstFree and nothing was copied
// yet. start and upper are read during the
// call only. One cgo call; blocks on RocksDB. REQUIRES: readGuard held.
func (s *Store) scanRange(cf *grocksdb.ColumnFamilyHandle, start, upper []byte, maxBytes int, firstFree bool,
	buf []byte, lens []C.size_t) (scanResult, error) {
	var r scanResult
	if len(lens) == 0 {
		r.stop = scanCount
		return r, nil
	}
	var bufp *C.char
	if cap(buf) > 0 {
		bufp = (*C.char)(unsafe.Pointer(unsafe.SliceData(buf[:1])))
	}
	var last C.uint64_t
	var need, size C.size_t
	var stop C.int
	var cerr *C.char
	first := C.int(0)
	if firstFree {
		first = 1
	}
	n := C.popshim_scan((*C.rocksdb_t)(cObject(s.db)), (*C.rocksdb_column_family_handle_t)(cObject(cf)),
		(*C.char)(unsafe.Pointer(unsafe.SliceData(start))), C.size_t(len(start)),
		(*C.char)(unsafe.Pointer(unsafe.SliceData(upper))), C.size_t(len(upper)),
		C.int(len(lens)), C.size_t(max(maxBytes, 0)), first,
		bufp, C.size_t(cap(buf)), unsafe.SliceData(lens), &last, &need, &size, &stop, &cerr)
	if cerr != nil {
		msg := C.GoString(cerr)
		C.rocksdb_free(unsafe.Pointer(cerr))
		return r, errors.New(msg)
	}
	r.n, r.last, r.need, r.size, r.stop = int(n), uint64(last), int(need), int(size), int(stop)
	return r, nil
}

// ReadBuffer is memory that ReadMessagesInto copies records into and
// reuses from one call to the next (the zero value is ready; it grows to the
// largest read). Not safe for concurrent use.
type ReadBuffer struct {
	buf  []byte
	lens []C.size_t
	recs [][]byte
	res  []byte // records copied out of the commit log; len: used by this read
}

// maxReadGuess bounds the buffer readRange sizes from its guess, bytes: a
// read of more than that grows through scanRoom, to what the record that
// did not fit needs. The average lags (it fell by 1/8 per read after a
// burst of 4 MiB messages, and each read until then allocated twice the
// budget); at twice this, a reused buffer still fits the broker's pool.
const maxReadGuess = 512 << 10

// readRange returns the records of (topic, queueId) in [from, limit), at
// most maxCount of them and at most maxBytes in total (the first always),
// with the offset one past the last returned (from when none), copied into
// rb's memory, or into new memory when rb is nil. Each record's capacity is
// clipped to its length. q is the queue's state. REQUIRES: readGuard held;
// from < limit, maxCount > 0.
func (s *Store) readRange(rb *ReadBuffer, q *queueState, topic string, queueId int32, from, limit int64, maxCount, maxBytes int) ([][]byte, int64, error) {
	reuse := rb != nil
	if !reuse {
		rb = &ReadBuffer{}
	}
	start := messageKey(nil, topic, queueId, from)
	upper := messageKey(nil, topic, queueId, limit)
	want := int(min(int64(maxCount), limit-from))
	if cap(rb.lens) < want {
		rb.lens = make([]C.size_t, want)
	}
	lens := rb.lens[:want]
	if cap(rb.recs) < want {
		rb.recs = make([][]byte, 0, want)
	}
	records := rb.recs[:0]
	rb.res = rb.res[:0]
	next, total, need := from, 0, 64
	for {
		est := q.recordAvg.Load()
		if est <= 0 {
			est = 512
		}
		room := max(min(maxBytes-total, (want-len(records))*int(est+est/8+16), maxReadGuess), need)
		var buf []byte
		switch {
		case !reuse:
			buf = make([]byte, 0, room)
		case len(records) == 0 && cap(rb.buf) >= room:
			buf = rb.buf[:0]
		default:
			// Grown to twice what this read needs. Records this call
			// already copied stay in the old buffer.
			buf = make([]byte, 0, 2*room)
			rb.buf = buf
		}
		r, err := s.scanRange(s.cfMessages(), start, upper, maxBytes-total, len(records) == 0, buf, lens[len(records):])
		if err != nil {
			return nil, from, fmt.Errorf("popstore: read %s/%d: %w", topic, queueId, err)
		}
		off, first := 0, len(records)
		for _, l := range lens[len(records) : len(records)+r.n] {
			records = append(records, buf[off:off+int(l):off+int(l)])
			off += int(l)
		}
		total += r.size
		if r.size != off {
			// Some values are commit-log references (a reference never
			// names 12 bytes, so the sizes differ): copy what they name.
			records = s.resolveRefs(rb, reuse, records, first, r.size-off)
		}
		if r.n > 0 {
			next = int64(r.last) + 1
			q.recordAvg.Store((est*7 + int64(off/r.n)) / 8)
		}
		if r.stop != scanRoom {
			rb.recs = records[:0]
			return records, next, nil
		}
		// The next record did not fit: read on into a buffer that holds it.
		start = messageKey(start[:0], topic, queueId, next)
		need = r.need
	}
}

// Cap returns the bytes of record memory rb holds for reuse (scan buffer
// and records copied out of the commit log).
func (rb *ReadBuffer) Cap() int { return cap(rb.buf) + cap(rb.res) }

// resolveRefs replaces the commit-log references among records[first:]
// with copies of the records they name, in rb.res (grown into new memory
// when it lacks room: records resolved earlier stay where they are) or in
// new memory when reuse is false, and drops those whose segment retention
// removed. extra bounds the bytes needed (the records' counted size less
// the values' size). REQUIRES: readGuard held.
func (s *Store) resolveRefs(rb *ReadBuffer, reuse bool, records [][]byte, first, extra int) [][]byte {
	need := extra + refLen*(len(records)-first) // at least what the references name
	var dst []byte
	switch {
	case !reuse:
		dst = make([]byte, 0, need)
	case cap(rb.res)-len(rb.res) >= need:
		dst = rb.res
	case need > maxReadGuess:
		dst = make([]byte, 0, need) // a read of large records: not kept doubled
	default:
		dst = make([]byte, 0, 2*need) // room to be reused by larger reads
	}
	dst, records = s.clog.resolve(dst, records, first)
	if reuse {
		rb.res = dst
	}
	return records
}
