package popstore

import (
	"encoding/binary"

	"github.com/linxGnu/grocksdb"
	"github.com/rs/zerolog"
)

// FlushMemtables starts (wait=false) or performs (wait=true) a flush of the
// messages, pop and offsets memtables, so that tests switch memtables while
// writes go on. Test-only.
func (s *Store) FlushMemtables(wait bool) error {
	fo := grocksdb.NewDefaultFlushOptions()
	defer fo.Destroy()
	fo.SetWait(wait)
	for _, cf := range []*grocksdb.ColumnFamilyHandle{s.cfMessages(), s.cfPop(), s.cfOffsets()} {
		if err := s.db.FlushCF(cf, fo); err != nil {
			return err
		}
	}
	return nil
}

// LatestSequenceNumber is RocksDB's last sequence number. Test-only.
func (s *Store) LatestSequenceNumber() uint64 { return s.db.GetLatestSequenceNumber() }

// KeyIndexEntries counts the key-index entries on disk. Test-only.
func (s *Store) KeyIndexEntries() int { return s.countEntries(s.cfIndex(), nil) }

// countEntries counts the keys of cf that start with prefix (all of them
// when prefix is empty).
func (s *Store) countEntries(cf *grocksdb.ColumnFamilyHandle, prefix []byte) int {
	ro := grocksdb.NewDefaultReadOptions()
	defer ro.Destroy()
	if len(prefix) > 0 {
		ro.SetIterateUpperBound(prefixLimit(prefix))
	}
	it := s.db.NewIteratorCF(ro, cf)
	defer it.Close()
	n := 0
	for it.Seek(prefix); it.Valid(); it.Next() {
		n++
	}
	return n
}

// MessagesProperty returns RocksDB property name (e.g. "rocksdb.num-blob-files")
// of the messages family. Test-only.
func (s *Store) MessagesProperty(name string) string {
	return s.db.GetPropertyCF(name, s.cfMessages())
}

// CompactMessages compacts the whole messages family. Test-only.
func (s *Store) CompactMessages() {
	s.db.CompactRangeCF(s.cfMessages(), grocksdb.Range{})
}

// StatsTicker returns RocksDB ticker name (e.g. "rocksdb.compact.write.bytes")
// with Options.Statistics. Test-only.
func (s *Store) StatsTicker(name string) uint64 {
	n, _ := tickerCount(s.opts.GetStatisticsString(), name)
	return n
}

// WaitCompactions flushes the messages family and waits (bounded by
// rounds polls of RocksDB's properties, pause between them) until no
// compaction is pending or running. Test-only.
func (s *Store) WaitCompactions(rounds int, pause func()) bool {
	for range rounds {
		if s.db.GetProperty("rocksdb.compaction-pending") == "0" && s.db.GetProperty("rocksdb.num-running-compactions") == "0" &&
			s.db.GetProperty("rocksdb.num-running-flushes") == "0" {
			return true
		}
		pause()
	}
	return false
}

// ReadMessagesByIterator is ReadMessages through grocksdb's Iterator, one
// cgo call per step, as it was before scanRange: the reference the tests
// compare readRange with. Test-only.
func (s *Store) ReadMessagesByIterator(topic string, queueId int32, fromOffset int64, maxCount, maxBytes int) ([][]byte, int64, error) {
	q := s.queue(topic, queueId)
	if q == nil {
		return nil, 0, nil
	}
	lo, hi := q.min.Load(), q.max.Load()
	fromOffset = max(fromOffset, lo)
	if fromOffset >= hi || maxCount <= 0 {
		return nil, min(fromOffset, hi), nil
	}
	ro := grocksdb.NewDefaultReadOptions()
	defer ro.Destroy()
	ro.SetIterateUpperBound(messageKey(nil, topic, queueId, hi))
	it := s.db.NewIteratorCF(ro, s.cfMessages())
	defer it.Close()
	var records [][]byte
	next, total := fromOffset, 0
	for it.Seek(messageKey(nil, topic, queueId, fromOffset)); it.Valid() && len(records) < maxCount; it.Next() {
		v, err := s.record(it.Value().Data())
		if err != nil {
			return nil, fromOffset, err
		}
		if len(records) > 0 && total+len(v) > maxBytes {
			break
		}
		k := it.Key().Data()
		next = int64(binary.BigEndian.Uint64(k[len(k)-8:])) + 1
		records = append(records, append([]byte(nil), v...))
		total += len(v)
	}
	return records, next, it.Err()
}

// SetRecordAvg sets the running record size of (topic, queueId), which
// sizes readRange's buffers, bytes. The queue must exist. Test-only.
func (s *Store) SetRecordAvg(topic string, queueId int32, n int64) {
	s.queue(topic, queueId).recordAvg.Store(n)
}

// StoredValueLen returns the length of the messages-family value of
// (topic, queueId, queueOffset) as RocksDB holds it: the record's length,
// or 12 for a commit-log reference. Test-only.
func (s *Store) StoredValueLen(topic string, queueId int32, queueOffset int64) (int, error) {
	v, err := s.getCF(s.cfMessages(), messageKey(nil, topic, queueId, queueOffset))
	return len(v), err
}

// PhysIndexEntries counts the physical-offset index entries ('P') of the
// messages family. Test-only.
func (s *Store) PhysIndexEntries() int { return s.countEntries(s.cfMessages(), physPrefix) }

// WALSpace is walSpace: the WAL files' sizes and the space allocated past
// their ends. Test-only.
func WALSpace(dir string) (wal, prealloc uint64, err error) { return walSpace(dir) }

// ErrCommitLogGone is errGone: the record's segment, or its part of one,
// was removed by retention. Test-only.
var ErrCommitLogGone = errGone

// CommitLogRead reads n bytes at phys straight from the commit log.
// Test-only.
func (s *Store) CommitLogRead(phys int64, n int) ([]byte, error) { return s.clog.read(nil, phys, n) }

// ReleaseWALTails is releaseWALTails with a silent logger.
func ReleaseWALTails(dir string) { releaseWALTails(dir, zerolog.Nop()) }
