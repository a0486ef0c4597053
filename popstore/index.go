package popstore

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/popshim/popshim/codec"
)

// The message index: RocketMQ's IndexService (store/.../index/IndexService.java)
// indexes every stored message under topic#UNIQ_KEY and topic#k for each
// non-empty space-separated k of its KEYS property and, since 5.5, under
// its TAGS value as a separate "T" index type, so QUERY_MESSAGE can find
// messages by business key, client message id or tag within a time range.
// popshim keeps the same entries as keys of the index column family,
// written by Txn.AppendMessage in the WriteBatch of the message itself:
//
//	minute(u32) topic 0x00 kind key 0x00 storeTimestamp(u64) physicalOffset(u64) → empty
//
// kind is IndexKeys ('K': KEYS elements and UNIQ_KEY, one space as in
// Java, whose unique-key queries read the key index) or IndexTags ('T').
// minute is STORETIMESTAMP / 60,000 (Unix ms). Leading with it keeps the
// table files of different minutes apart in key space, so RocksDB's
// compactions move them down the levels instead of merging (and rewriting)
// everything indexed in a longer period, as the random keys behind a
// coarser prefix would make it; retention drops whole minutes of entries
// with one range delete (Txn.TrimKeyIndex); a query walks the non-empty
// minutes of its time range newest first (72 h: at most 4,320 seeks). A key containing 0x00
// is not indexed (it would make entries ambiguous); neither is a message when
// the store was opened with Options.DisableMessageIndex.

// Index kinds: the byte after the topic in a key-index entry, and the
// indexType of a 5.5 QueryMessageRequestHeader.
const (
	IndexKeys byte = 'K' // KEYS elements and UNIQ_KEY
	IndexTags byte = 'T' // the TAGS value
)

// indexBucketMillis is the width of one bucket (the leading key field) of
// the key index: a minute.
const indexBucketMillis = 60 * 1000

// indexBucket is the bucket of a store timestamp: 0 for negative ones,
// the last bucket for any past it (a query's end of Long.MAX_VALUE; the
// 32-bit minute ends in the year 10,136).
func indexBucket(tsMillis int64) uint32 {
	if tsMillis <= 0 {
		return 0
	}
	return uint32(min(tsMillis/indexBucketMillis, math.MaxUint32))
}

// appendIndexPrefix appends bucket topic 0x00 kind key 0x00.
func appendIndexPrefix(dst []byte, bucket uint32, topic string, kind byte, key []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, bucket)
	dst = append(dst, topic...)
	dst = append(dst, 0, kind)
	dst = append(dst, key...)
	return append(dst, 0)
}

// keyIndexBucketStart is the first possible entry key of bucket.
func keyIndexBucketStart(bucket uint32) []byte {
	return binary.BigEndian.AppendUint32(nil, bucket)
}

// recordProperties returns the properties bytes of a stored-message record
// (aliasing rec), or ok=false when the record's lengths do not add up.
func recordProperties(rec []byte) (props []byte, ok bool) {
	if len(rec) < recMinLen {
		return nil, false
	}
	sys := binary.BigEndian.Uint32(rec[recSysFlag:])
	p := storeTimestampPos(rec) + 8
	if sys&uint32(codec.SysFlagStoreHostV6) != 0 {
		p += 20
	} else {
		p += 8
	}
	p += 4 + 8 // reconsumeTimes, preparedTransactionOffset
	if p+4 > len(rec) {
		return nil, false
	}
	body := int(int32(binary.BigEndian.Uint32(rec[p:])))
	if body < 0 {
		return nil, false
	}
	p += 4 + body
	if p+1 > len(rec) {
		return nil, false
	}
	if int32(binary.BigEndian.Uint32(rec[4:])) == codec.MagicCodeV1 {
		p += 1 + int(int8(rec[p]))
	} else {
		if p+2 > len(rec) {
			return nil, false
		}
		p += 2 + int(int16(binary.BigEndian.Uint16(rec[p:])))
	}
	if p+2 > len(rec) {
		return nil, false
	}
	n := int(int16(binary.BigEndian.Uint16(rec[p:])))
	p += 2
	if n < 0 || p+n > len(rec) {
		return nil, false
	}
	return rec[p : p+n], true
}

// indexKeys calls fn with the UNIQ_KEY value and each non-empty
// space-separated KEYS value of props (RocketMQ's properties string:
// name 0x01 value 0x02 …) as IndexKeys, and a non-empty TAGS value as
// IndexTags, as IndexService.buildIndex picks them.
func indexKeys(props []byte, fn func(kind byte, key []byte)) {
	for len(props) > 0 {
		var pair []byte
		if i := bytes.IndexByte(props, codec.PropertySeparator); i >= 0 {
			pair, props = props[:i], props[i+1:]
		} else {
			pair, props = props, nil
		}
		i := bytes.IndexByte(pair, codec.PropertyNameValueSeparator)
		if i <= 0 {
			continue
		}
		name, val := pair[:i], pair[i+1:]
		switch string(name) {
		case codec.PropertyUniqClientMessageIDKeyIdx:
			if len(val) > 0 {
				fn(IndexKeys, val)
			}
		case codec.PropertyTags:
			if len(val) > 0 {
				fn(IndexTags, val)
			}
		case codec.PropertyKeys:
			for len(val) > 0 {
				var k []byte
				if j := bytes.IndexByte(val, ' '); j >= 0 {
					k, val = val[:j], val[j+1:]
				} else {
					k, val = val, nil
				}
				if len(k) > 0 {
					fn(IndexKeys, k)
				}
			}
		}
	}
}

// indexMessage adds the key-index entries of one appended record.
func (t *Txn) indexMessage(topic string, record []byte, phys int64) {
	props, ok := recordProperties(record)
	if !ok {
		return
	}
	ts, _ := StoreTimestamp(record)
	bucket := indexBucket(ts)
	indexKeys(props, func(kind byte, key []byte) {
		if bytes.IndexByte(key, 0) >= 0 {
			return
		}
		t.scratch = appendIndexPrefix(t.scratch[:0], bucket, topic, kind, key)
		t.scratch = binary.BigEndian.AppendUint64(t.scratch, uint64(ts))
		t.scratch = binary.BigEndian.AppendUint64(t.scratch, uint64(phys))
		t.b.put(cfiIndex, t.scratch, nil)
		t.idx = indexMark{ts: ts, phys: phys, set: true}
	})
}

// TrimKeyIndex removes the key-index entries of every minute that ends at or
// before cutoffMillis (retention: their messages are older than the cutoff).
// Entries of the minute holding the cutoff stay until the next pass; a query
// skips entries whose message is gone.
func (t *Txn) TrimKeyIndex(cutoffMillis int64) error {
	if err := t.check(); err != nil {
		return err
	}
	h := indexBucket(cutoffMillis)
	if h == 0 {
		return nil
	}
	t.b.delRange(cfiIndex, keyIndexBucketStart(0), keyIndexBucketStart(h))
	return nil
}
