package popstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
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
	var scratch []byte
	hashed := &indexWalker{it: it, hash: s.indexHash(&scratch, topic, kind, []byte(key))}
	legacy := &indexWalker{it: it, legacy: true, topic: topic, kind: kind, key: []byte(key)}
	walkers := [2]*indexWalker{hashed, legacy}
	type head struct {
		hits   []indexHit
		minute uint32
		ok     bool
	}
	var heads [2]head
	advance := func(i int) error {
		h := &heads[i]
		var err error
		h.hits, h.minute, h.ok, err = walkers[i].next(h.hits[:0])
		if err != nil {
			return fmt.Errorf("popstore: key index: %w", err)
		}
		return nil
	}
	for i, w := range walkers {
		w.begin, w.end = beginMillis, endMillis
		w.first, w.cur = indexBucket(beginMillis), indexBucket(endMillis)
		if err := advance(i); err != nil {
			return res, err
		}
	}
	var hits []indexHit
	total := 0
	for len(res.Records) < maxNum {
		// The newest minute either layout has entries in; both when a
		// minute has entries of both (the minute of an upgrade).
		hits = hits[:0]
		m, both := heads[0].minute, heads[0].ok && heads[1].ok && heads[0].minute == heads[1].minute
		if !heads[0].ok || (heads[1].ok && heads[1].minute > m) {
			m = heads[1].minute
		}
		for i := range heads {
			if heads[i].ok && heads[i].minute == m {
				hits = append(hits, heads[i].hits...)
				if err := advance(i); err != nil {
					return res, err
				}
			}
		}
		if len(hits) == 0 {
			break
		}
		if both {
			sort.Slice(hits, func(i, j int) bool {
				return hits[i].ts > hits[j].ts || (hits[i].ts == hits[j].ts && hits[i].phys > hits[j].phys)
			})
		}
		full := false
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
			if !recordHasKey(rec, kind, key) {
				continue // another key of the same hash
			}
			if len(res.Records) > 0 && total+len(rec) > maxBytes {
				full = true
				break
			}
			total += len(rec)
			res.Records = append(res.Records, rec)
		}
		if full {
			break
		}
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
	mk, err := s.getCF(s.cfMessages(), physKey(phys))
	if errors.Is(err, ErrNotFound) {
		return s.commitLogRecord(topic, phys)
	}
	if err != nil {
		return nil, err
	}
	if topic != "" && (!bytes.HasPrefix(mk, []byte(topic)) || len(mk) != len(topic)+1+12 || mk[len(topic)] != 0) {
		return nil, ErrNotFound
	}
	rec, err := s.getRecord(mk)
	if err != nil {
		return nil, err
	}
	if len(rec) < recPhysOffset+8 || int64(binary.BigEndian.Uint64(rec[recPhysOffset:])) != phys {
		return nil, ErrNotFound
	}
	return rec, nil
}

// commitLogRecord returns a copy of the record the commit log holds at
// phys if it is a stored message, of topic unless topic is "": it decodes
// in place (no copy, whatever its TOTALSIZE says) within the segment and
// below the committed end, its PHYSICALOFFSET is phys, and its message key
// still references phys with its size. Only then is it copied. A hole, an
// offset inside a record, bytes of a batch whose RocksDB write failed and
// a removed message answer ErrNotFound. REQUIRES: readGuard held.
func (s *Store) commitLogRecord(topic string, phys int64) ([]byte, error) {
	end := s.committedPhys.Load()
	if phys < 0 || phys >= end || end-phys < recMinLen {
		return nil, ErrNotFound
	}
	mk, n, ok := s.commitLogRecordKey(topic, phys, end)
	if !ok {
		return nil, ErrNotFound
	}
	v, err := s.getCF(s.cfMessages(), mk)
	if err != nil {
		return nil, err
	}
	if p, size, ok := isRef(v); !ok || p != phys || size != n {
		return nil, ErrNotFound
	}
	rec, err := s.clog.read(make([]byte, 0, n), phys, n)
	if err != nil {
		return nil, ErrNotFound
	}
	return rec, nil
}

// commitLogRecordKey decodes the record at phys in the commit log's
// mapping, bytes below end only, and returns its message key and size;
// ok=false unless it is a well-formed record stamped with phys (of topic
// unless topic is ""). REQUIRES: readGuard held.
func (s *Store) commitLogRecordKey(topic string, phys, end int64) (mk []byte, n int, ok bool) {
	s.clog.mu.RLock()
	defer s.clog.mu.RUnlock()
	b := s.clog.from(phys)
	if int64(len(b)) > end-phys {
		b = b[:end-phys]
	}
	m, n, err := codec.UnsafeDecodeMessage(b)
	if err != nil || m.PhysicalOffset != phys || (topic != "" && m.Topic != topic) || checkName("topic", m.Topic) != nil {
		return nil, 0, false
	}
	return messageKey(nil, m.Topic, m.QueueID, m.QueueOffset), n, true
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
		rec, err := s.getRecord(it.Value().Data())
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return -1, err
		}
		k := it.Key().Data()
		if len(rec) < recPhysOffset+8 || !bytes.Equal(rec[recPhysOffset:recPhysOffset+8], k[len(k)-8:]) {
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
