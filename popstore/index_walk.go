package popstore

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/linxGnu/grocksdb"
)

// indexHit is one key-index entry a query found: its message's store
// timestamp (Unix ms) and physical offset.
type indexHit struct{ ts, phys int64 }

// indexWalker walks the key-index entries of one key, in one of the two
// entry layouts (index.go), minute by minute, newest first. It lives for
// one QueryMessagesByKey on its reader goroutine.
type indexWalker struct {
	it     *grocksdb.Iterator
	legacy bool
	// topic, kind and key name the entries of the older layout; hash
	// those of the hashed one.
	topic      string
	kind       byte
	key        []byte
	hash       uint64
	begin, end int64  // STORETIMESTAMP range, Unix ms
	first, cur uint32 // minutes still to walk: cur down to first
	done       bool
	prefix     []byte // scratch: the current minute's entry prefix
	target     []byte // scratch: the seek target
}

// seekTarget returns the newest possible entry of the key in minute cur
// at or before w.end, and sets w.prefix to that minute's entry prefix.
func (w *indexWalker) seekTarget(cur uint32) []byte {
	if w.legacy {
		w.prefix = appendLegacyIndexPrefix(w.prefix[:0], cur, w.topic, w.kind, w.key)
		w.target = binary.BigEndian.AppendUint64(append(w.target[:0], w.prefix...), uint64(max(w.end, 0)))
	} else {
		w.prefix = appendIndexPrefix(w.prefix[:0], cur, w.hash)
		w.target = binary.BigEndian.AppendUint16(append(w.target[:0], w.prefix...), msOfBucket(cur, w.end))
	}
	return binary.BigEndian.AppendUint64(w.target, math.MaxUint64)
}

// minuteOf returns the minute of entry k, ok=false when k is not of the
// walker's layout (a seek in the hashed layout went below all of it).
func (w *indexWalker) minuteOf(k []byte) (uint32, bool) {
	if w.legacy {
		if len(k) < 4 {
			return 0, false
		}
		return binary.BigEndian.Uint32(k), true
	}
	if len(k) < 5 || k[0] != indexMarker {
		return 0, false
	}
	return binary.BigEndian.Uint32(k[1:]), true
}

// entry decodes the store timestamp and physical offset of k, an entry
// of minute cur with prefix w.prefix; ok=false when k is not such an entry.
func (w *indexWalker) entry(cur uint32, k []byte) (hit indexHit, ok bool) {
	if !bytes.HasPrefix(k, w.prefix) {
		return hit, false
	}
	rest := k[len(w.prefix):]
	if w.legacy {
		if len(rest) != 16 {
			return hit, false
		}
		return indexHit{int64(binary.BigEndian.Uint64(rest)), int64(binary.BigEndian.Uint64(rest[8:]))}, true
	}
	if len(k) != indexEntryLen {
		return hit, false
	}
	ts := int64(cur)*indexBucketMillis + int64(binary.BigEndian.Uint16(rest))
	return indexHit{ts, int64(binary.BigEndian.Uint64(rest[2:]))}, true
}

// next appends to dst the entries, newest first, of the newest minute at
// or before the walker's position that has entries of the key within
// [w.begin, w.end], and returns that minute; ok=false when no minute is
// left. Empty minutes cost one seek each, and runs of minutes with no
// entry at all in the layout are skipped in one.
func (w *indexWalker) next(dst []indexHit) (hits []indexHit, minute uint32, ok bool, err error) {
	for !w.done && w.cur >= w.first {
		cur := w.cur
		w.it.SeekForPrev(w.seekTarget(cur))
		if !w.it.Valid() {
			w.done = true
			break
		}
		m, ok := w.minuteOf(w.it.Key().Data())
		if !ok {
			w.done = true
			break
		}
		if m < cur {
			w.cur = m // skip the empty minutes in between
			continue
		}
		n := len(dst)
		for ; w.it.Valid(); w.it.Prev() {
			h, ok := w.entry(cur, w.it.Key().Data())
			if !ok || h.ts < w.begin {
				break
			}
			dst = append(dst, h)
		}
		if cur == 0 {
			w.done = true
		} else {
			w.cur = cur - 1
		}
		if len(dst) > n {
			return dst, cur, true, w.it.Err()
		}
	}
	return dst, 0, false, w.it.Err()
}
