package popstore

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"slices"
)

// Column family indexes into Store.cfs.
const (
	cfiMessages = 1
	cfiPop      = 2
	cfiOffsets  = 3
	cfiMeta     = 4
	cfiIndex    = 5
)

// RocksDB WriteBatch record tags (db/dbformat.h ValueType; also listed by
// grocksdb's WriteBatchRecordType).
const (
	tagCFDeletion      = 0x4
	tagCFValue         = 0x5
	tagCFRangeDeletion = 0xE
)

// sortLimit: batches whose encoding is larger are written in op order (the
// sort costs a copy of every byte; big batches are message appends whose
// keys are already ascending per queue).
const sortLimit = 4 << 20

// batchRep builds a RocksDB WriteBatch in its serialized form (the WAL
// record format of db/write_batch.cc):
//
//	sequence fixed64 LE (0) | count fixed32 LE | records…
//	record: tag u8 | cf varint32 | key varstring | value varstring (put, range)
//
// in Go memory, so that adding an entry costs no cgo call, an op is rolled
// back by truncation, and the whole batch crosses into RocksDB with one
// WriteBatchFrom. At commit the records are stably sorted by (column
// family, key) — the index family's records by op order only, since its
// vector memtable takes any order — unless the batch holds a range delete: keys of different
// records commute, records of one key keep their order, and a sorted batch
// makes each memtable insert land next to the previous one, so RocksDB's
// skiplist reuses its search path instead of descending from the top.
type batchRep struct {
	rep      []byte
	recs     []recRef
	hasRange bool
	// sorted and order are encode's scratch space, kept for reuse.
	sorted []byte
	order  []recRef
}

// recRef locates one record in rep and its sort key.
type recRef struct {
	off, end int32 // record bytes rep[off:end]
	keyOff   int32 // key bytes rep[keyOff:keyOff+keyLen]
	keyLen   int32
	prefix   uint64 // the key's first 8 bytes, big-endian, zero-padded: orders like the bytes
	cf       uint8
}

// keyPrefix is the first 8 bytes of key as a big-endian integer (missing
// bytes are zero), so comparing prefixes orders keys as bytes.Compare does
// on those bytes; equal prefixes need the full comparison.
func keyPrefix(key []byte) uint64 {
	if len(key) >= 8 {
		return binary.BigEndian.Uint64(key)
	}
	var b [8]byte
	copy(b[:], key)
	return binary.BigEndian.Uint64(b[:])
}

// repMark is a rollback point.
type repMark struct {
	repLen, recs int
	hasRange     bool
}

func (b *batchRep) mark() repMark {
	return repMark{len(b.rep), len(b.recs), b.hasRange}
}

func (b *batchRep) rollback(m repMark) {
	b.rep, b.recs, b.hasRange = b.rep[:m.repLen], b.recs[:m.recs], m.hasRange
}

func (b *batchRep) count() int { return len(b.recs) }

// key returns the key of entry i; valid until the next add.
func (b *batchRep) key(i int) []byte {
	r := &b.recs[i]
	return b.rep[r.keyOff : r.keyOff+r.keyLen]
}

func (b *batchRep) add(tag byte, cf uint8, key, value []byte, withValue bool) {
	if len(b.rep) == 0 {
		b.rep = append(b.rep, make([]byte, 12)...)
	}
	off := len(b.rep)
	b.rep = append(b.rep, tag, cf) // cf ids are small: one varint byte (patched in encode)
	b.rep = binary.AppendUvarint(b.rep, uint64(len(key)))
	keyOff := len(b.rep)
	b.rep = append(b.rep, key...)
	if withValue {
		b.rep = binary.AppendUvarint(b.rep, uint64(len(value)))
		b.rep = append(b.rep, value...)
	}
	b.recs = append(b.recs, recRef{off: int32(off), end: int32(len(b.rep)), keyOff: int32(keyOff), keyLen: int32(len(key)), prefix: keyPrefix(key), cf: cf})
}

func (b *batchRep) put(cf uint8, key, value []byte) { b.add(tagCFValue, cf, key, value, true) }
func (b *batchRep) del(cf uint8, key []byte)        { b.add(tagCFDeletion, cf, key, nil, false) }

// delRange adds a range delete. Only the messages and index families may
// take one: the pop and offsets families use a memtable insert hint, which
// RocksDB 7.8 shares with the range-deletion memtable (an assertion
// failure, see Open).
func (b *batchRep) delRange(cf uint8, start, end []byte) {
	if cf != cfiMessages && cf != cfiIndex {
		panic("popstore: range delete outside the messages and index column families")
	}
	b.add(tagCFRangeDeletion, cf, start, end, true)
	b.hasRange = true
}

// encode returns the serialized batch, column family indexes replaced by
// ids[index] (each id must be < 128), sorted as described on batchRep.
func (b *batchRep) encode(ids *[numCFs]uint32) []byte {
	if len(b.recs) == 0 {
		return nil
	}
	for _, r := range b.recs {
		b.rep[r.off+1] = byte(ids[r.cf])
	}
	binary.LittleEndian.PutUint32(b.rep[8:], uint32(len(b.recs)))
	if b.hasRange || len(b.rep) > sortLimit || len(b.recs) < 3 {
		return b.rep
	}
	// (cf, key, position): the position tie-break keeps records of one key
	// in op order, so an unstable O(n log n) sort is enough.
	cmp := func(x, y recRef) int {
		if x.cf != y.cf {
			return int(x.cf) - int(y.cf)
		}
		if x.cf == cfiIndex {
			// The index family's vector memtable appends in any order:
			// keep op order and skip comparing its long, random keys.
			return int(x.off - y.off)
		}
		if c := cmp.Compare(x.prefix, y.prefix); c != 0 {
			return c
		}
		if c := bytes.Compare(b.rep[x.keyOff:x.keyOff+x.keyLen], b.rep[y.keyOff:y.keyOff+y.keyLen]); c != 0 {
			return c
		}
		return int(x.off - y.off)
	}
	if slices.IsSortedFunc(b.recs, cmp) {
		return b.rep
	}
	b.order = append(b.order[:0], b.recs...)
	slices.SortFunc(b.order, cmp)
	out := append(b.sorted[:0], b.rep[:12]...)
	for _, r := range b.order {
		out = append(out, b.rep[r.off:r.end]...)
	}
	b.sorted = out
	return out
}

// inlineRecords rebuilds the batch with the reference AppendMessage put for
// each of recs (entry number rec, in ascending order) replaced by the
// record itself: a batch too small for its own commit-log
// fdatasync keeps its records in the WAL (Options.CommitLogBatchMinBytes).
// rep and the scratch buffer trade places.
func (b *batchRep) inlineRecords(recs []clogRec) {
	out := append(b.sorted[:0], b.rep[:12]...)
	j := 0
	for i := range b.recs {
		r := &b.recs[i]
		off := int32(len(out))
		if j < len(recs) && recs[j].rec == i {
			key := b.key(i)
			out = append(out, tagCFValue, b.rep[r.off+1])
			out = binary.AppendUvarint(out, uint64(len(key)))
			r.keyOff = int32(len(out))
			out = append(out, key...)
			out = binary.AppendUvarint(out, uint64(len(recs[j].b)))
			out = append(out, recs[j].b...)
			j++
		} else {
			out = append(out, b.rep[r.off:r.end]...)
			r.keyOff = off + (r.keyOff - r.off)
		}
		r.off, r.end = off, int32(len(out))
	}
	b.sorted, b.rep = b.rep, out
}
