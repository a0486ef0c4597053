package popstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/linxGnu/grocksdb"

	"github.com/popshim/popshim/codec"
)

// MaxQueryMessages caps the messages one QueryMessagesByKey returns, as
// RocketMQ's maxMsgsNumBatch (64) caps IndexService.queryOffset.
const MaxQueryMessages = 64

// indexMark is one key-index entry's store timestamp and physical offset.
type indexMark struct {
	ts, phys int64
	set      bool
}

// KeyQueryResult is what QueryMessagesByKey found.
type KeyQueryResult struct {
	// Records are the stored-message records, ascending by physical offset
	// (as DefaultMessageStore.queryMessage sorts them); each is a copy.
	Records [][]byte
	// LastIndexedMillis and LastIndexedPhys are the STORETIMESTAMP (Unix
	// ms) and physical offset of the newest entry indexed since Open (0
	// before one): QueryMessageResponseHeader's indexLastUpdateTimestamp
	// and indexLastUpdatePhyoffset.
	LastIndexedMillis, LastIndexedPhys int64
}

// QueryMessagesByKey returns the messages of topic indexed under key as
// kind (IndexKeys: a KEYS element or a UNIQ_KEY; IndexTags: a TAGS value) whose STORETIMESTAMP is within
// [beginMillis, endMillis], at most min(maxNum, MaxQueryMessages), the
// newest ones when more match; it stops before a record that would take the
// records' total past maxBytes (one record is always returned). An entry whose message is gone (retention,
// deleted topic) is skipped. An unknown topic or key finds nothing. Blocks on
// RocksDB: call from a reader goroutine. Errors: ErrClosed,
// ErrUnavailable, RocksDB errors.
func (s *Store) QueryMessagesByKey(topic string, kind byte, key string, maxNum, maxBytes int, beginMillis, endMillis int64) (KeyQueryResult, error) {
	var res KeyQueryResult
	if m := s.lastIndexed.Load(); m != nil {
		res.LastIndexedMillis, res.LastIndexedPhys = m.ts, m.phys
	}
	if !s.readGuard() {
		return res, s.guardErr()
	}
	defer s.readDone()
	maxNum = min(maxNum, MaxQueryMessages)
	if maxNum <= 0 || topic == "" || key == "" || endMillis < beginMillis ||
		strings.IndexByte(key, 0) >= 0 || strings.IndexByte(topic, 0) >= 0 {
		return res, nil
	}
	ro := grocksdb.NewDefaultReadOptions()
	defer ro.Destroy()
	it := s.db.NewIteratorCF(ro, s.cfIndex())
	defer it.Close()
	first := indexBucket(beginMillis)
	cur := indexBucket(endMillis)
	var prefix, target []byte
	type hit struct{ ts, phys int64 }
	var hits []hit
	total, full := 0, false
	for cur >= first && len(res.Records) < maxNum && !full {
		prefix = appendIndexPrefix(prefix[:0], cur, topic, kind, []byte(key))
		target = binary.BigEndian.AppendUint64(append(target[:0], prefix...), uint64(max(endMillis, 0)))
		target = binary.BigEndian.AppendUint64(target, math.MaxUint64)
		it.SeekForPrev(target)
		if !it.Valid() {
			break
		}
		k := it.Key().Data()
		if len(k) < 4 {
			break
		}
		if h := binary.BigEndian.Uint32(k); h < cur {
			cur = h // skip the empty buckets in between
			continue
		}
		hits = hits[:0]
		for ; it.Valid(); it.Prev() {
			k = it.Key().Data()
			if !bytes.HasPrefix(k, prefix) || len(k) != len(prefix)+16 {
				break
			}
			ts := int64(binary.BigEndian.Uint64(k[len(prefix):]))
			if ts < beginMillis {
				break
			}
			hits = append(hits, hit{ts, int64(binary.BigEndian.Uint64(k[len(prefix)+8:]))})
		}
		if err := it.Err(); err != nil {
			return res, fmt.Errorf("popstore: key index: %w", err)
		}
		for _, h := range hits {
			if len(res.Records) >= maxNum {
				break
			}
			rec, err := s.indexedRecord(topic, h.phys)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				return res, err
			}
			if len(res.Records) > 0 && total+len(rec) > maxBytes {
				full = true
				break
			}
			total += len(rec)
			res.Records = append(res.Records, rec)
		}
		if cur == 0 {
			break
		}
		cur--
	}
	if err := it.Err(); err != nil {
		return res, fmt.Errorf("popstore: key index: %w", err)
	}
	sort.Slice(res.Records, func(i, j int) bool {
		return binary.BigEndian.Uint64(res.Records[i][recPhysOffset:]) < binary.BigEndian.Uint64(res.Records[j][recPhysOffset:])
	})
	return res, nil
}

// indexedRecord reads the record at physical offset phys and checks that it
// still is that message (a deleted and re-created topic reuses message
// keys), of topic unless topic is "". The physical-offset index names
// inline records and the first record of each commit-log batch; any other
// is read from the commit log (commitLogRecord). ErrNotFound otherwise.
// REQUIRES: readGuard held.
func (s *Store) indexedRecord(topic string, phys int64) ([]byte, error) {
	v, err := s.getCF(s.cfMessages(), physKey(phys))
	if errors.Is(err, ErrNotFound) {
		return s.commitLogRecord(topic, phys)
	}
	if err != nil {
		return nil, err
	}
	key, want := physEntryTarget(v, phys)
	if key == nil {
		return nil, ErrNotFound
	}
	rec, err := s.getRecord(key)
	if err != nil {
		return nil, err
	}
	if p, ok := RecordPhysicalOffset(rec); !ok || p != want {
		return nil, ErrNotFound
	}
	if topic != "" && !recordOfTopic(key, rec, topic) {
		return nil, ErrNotFound
	}
	return rec, nil
}

// physEntryTarget reads the value v of the physical-offset index entry of
// phys: the key of the record to read and the PHYSICALOFFSET that record
// must carry, or nil for a value of no known form. The forms (doc.go):
// a message key (want phys); a timer key, for an entry not yet delivered
// (PutTimer; want phys); a message key followed by the delivered message's
// physical offset (u64 BE), for a delivered timer entry (DeliverTimer).
func physEntryTarget(v []byte, phys int64) (key []byte, want int64) {
	if bytes.HasPrefix(v, timerPrefix) {
		if len(v) != len(timerPrefix)+16 {
			return nil, 0
		}
		return v, phys
	}
	i := bytes.IndexByte(v, 0)
	switch {
	case i <= 0:
		return nil, 0
	case len(v) == i+1+12:
		return v, phys
	case len(v) == i+1+12+8:
		return v[:i+1+12], int64(binary.BigEndian.Uint64(v[i+1+12:]))
	}
	return nil, 0
}

// recordOfTopic reports whether the record rec, read under key, is of
// topic: a message key names it; a timer entry's record says it.
func recordOfTopic(key, rec []byte, topic string) bool {
	if !bytes.HasPrefix(key, timerPrefix) {
		return len(key) == len(topic)+1+12 && bytes.HasPrefix(key, []byte(topic)) && key[len(topic)] == 0
	}
	m, _, err := codec.UnsafeDecodeMessage(rec)
	return err == nil && m.Topic == topic
}

// commitLogRecord returns a copy of the record the commit log holds at
// phys if it is a stored message, of topic unless topic is "": read below
// the committed end (commitLog.recordAt, which reads no more than a
// header unless it carries PHYSICALOFFSET phys), it decodes whole, and
// its message key still references phys with its size. A hole, an offset
// inside a record, bytes of a batch whose RocksDB write failed and a
// removed message answer ErrNotFound; a failed read its error.
// REQUIRES: readGuard held.
func (s *Store) commitLogRecord(topic string, phys int64) ([]byte, error) {
	end := s.committedPhys.Load()
	if phys < 0 || phys >= end || end-phys < recMinLen {
		return nil, ErrNotFound
	}
	rec, err := s.clog.recordAt(phys, end)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, ErrNotFound
	}
	m, n, err := codec.UnsafeDecodeMessage(rec)
	if err != nil || n != len(rec) || m.PhysicalOffset != phys || (topic != "" && m.Topic != topic) || checkName("topic", m.Topic) != nil {
		return nil, ErrNotFound
	}
	v, err := s.getCF(s.cfMessages(), messageKey(nil, m.Topic, m.QueueID, m.QueueOffset))
	if err != nil {
		return nil, err
	}
	if p, size, ok := isRef(v); !ok || p != phys || size != n {
		return nil, ErrNotFound
	}
	return rec, nil
}

// EarliestMessageTime returns the STORETIMESTAMP (Unix ms) of the oldest
// message still stored, or -1 when there is none, as
// DefaultMessageStore.getEarliestMessageTime answers from the first
// CommitLog record. It reads the message at the lowest physical offset that
// still names a message (the first few entries of the physical-offset
// index) and, when there are none or those all belong to deleted topics,
// the first message of every queue. The index names only the first record
// of a commit-log batch, so the answer can be one batch late when that
// record is gone and the rest of its batch is not, as Java's can name a
// deleted topic's record. Blocks on RocksDB: call from a reader goroutine. Errors:
// ErrClosed, ErrUnavailable, RocksDB errors.
func (s *Store) EarliestMessageTime() (int64, error) {
	if !s.readGuard() {
		return -1, s.guardErr()
	}
	defer s.readDone()
	ro := grocksdb.NewDefaultReadOptions()
	defer ro.Destroy()
	ro.SetIterateUpperBound(prefixLimit(physPrefix))
	it := s.db.NewIteratorCF(ro, s.cfMessages())
	defer it.Close()
	tries := 0
	for it.Seek(physPrefix); it.Valid() && tries < 16; it.Next() {
		tries++
		k := it.Key().Data()
		if len(k) != len(physPrefix)+8 {
			continue
		}
		phys := int64(binary.BigEndian.Uint64(k[len(physPrefix):]))
		key, want := physEntryTarget(it.Value().Data(), phys)
		if key == nil || want != phys {
			continue // unknown, or a delivered timer's: its record is newer than its place
		}
		rec, err := s.getRecord(key)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return -1, err
		}
		if p, ok := RecordPhysicalOffset(rec); !ok || p != phys {
			continue // a re-created topic's message under the deleted one's key
		}
		if ts, ok := StoreTimestamp(rec); ok {
			return ts, nil
		}
	}
	if err := it.Err(); err != nil {
		return -1, fmt.Errorf("popstore: physical index: %w", err)
	}
	// No index entry names a live message (the only batch markers left may
	// have been trimmed by retention while the rest of their batch lives
	// on): the first message of every queue decides.
	earliest := int64(-1)
	var ferr error
	s.queues.Range(func(k, v any) bool {
		qk, st := k.(queueKey), v.(*queueState)
		if st.min.Load() >= st.max.Load() {
			return true
		}
		rec, err := s.readOne(qk.topic, qk.queueId, st.min.Load())
		if errors.Is(err, ErrNotFound) {
			return true
		}
		if err != nil {
			ferr = err
			return false
		}
		if ts, ok := StoreTimestamp(rec); ok && (earliest < 0 || ts < earliest) {
			earliest = ts
		}
		return true
	})
	return earliest, ferr
}
