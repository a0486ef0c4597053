package popstore

// The messages family's SST partitioner (partitioner.cc).
//
// Each queue appends to its own key range (topic 0x00 queueId offset), and
// the physical-offset index appends to 0x00 'P'. With leveled compaction
// and no partitioner, a compaction cuts its output files by size only, so
// a file below L0 spans the tails of several queues; its key range then
// contains every older key of the queues between its first and last key,
// and moving it down merges (rewrites) all of their data in the next
// level. The work per compaction grew with the data kept: in 10 minutes
// of 1 KiB produce at 60 k msgs/s (2026-12-05) the messages family's
// compactions from L1 to L2 reached 339 MB, and throughput fell with
// each.
//
// The partitioner starts a new output file where the stream changes (the
// queue of a message key, the kind byte of a 0x00 index key) once the file
// holds 1 MiB, and always before and after an index stream or a queue
// whose first key in the compaction has a queueOffset of at least 65,536
// (it may have that many older keys below). Such a file holds one stream's
// consecutive keys; the stream's older keys lie below it without overlap,
// so RocksDB moves the file down a level without rewriting anything. The
// 1 MiB floor lets young, quiet queues share files, so many of them do not
// make many tiny files (their older keys below are few by definition). An
// L0→L1 compaction still rewrites L1 (flushed files span every stream),
// which max_bytes_for_level_base bounds: the compaction work per message
// no longer grows with the data kept. Same 10-minute run: the last
// minute's throughput 0.85 of the first's with the partitioner, 0.76
// without (both with backgroundCompactions).

/*
#cgo CXXFLAGS: -std=c++17 -O2
#include <stddef.h>
#include <stdint.h>
void popshim_set_stream_partitioner(void* opts);
size_t popshim_stream_prefix_len(const char* k, size_t n);
int popshim_should_partition(const char* prev, size_t prev_n, const char* cur, size_t cur_n, uint64_t size);
*/
import "C"

import (
	"unsafe"

	"github.com/linxGnu/grocksdb"
)

// setStreamPartitioner installs the stream partitioner in o (the messages
// family's options), before the database is opened with them.
func setStreamPartitioner(o *grocksdb.Options) {
	C.popshim_set_stream_partitioner(cObject(o))
}

// streamPrefixLen is how many leading bytes of a messages-family key name
// its stream, as the partitioner sees it (tests).
func streamPrefixLen(k []byte) int {
	return int(C.popshim_stream_prefix_len(cKey(k), C.size_t(len(k))))
}

// shouldPartition is the partitioner's decision for a file of size bytes
// whose last key is prev, before key cur (tests).
func shouldPartition(prev, cur []byte, size uint64) bool {
	return C.popshim_should_partition(cKey(prev), C.size_t(len(prev)), cKey(cur), C.size_t(len(cur)), C.uint64_t(size)) == 1
}

// cBytes points C at b's first byte (nil for an empty b).
func cKey(b []byte) *C.char {
	if len(b) == 0 {
		return nil
	}
	return (*C.char)(unsafe.Pointer(&b[0]))
}
