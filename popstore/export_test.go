package popstore

import "github.com/linxGnu/grocksdb"

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
func (s *Store) KeyIndexEntries() int {
	ro := grocksdb.NewDefaultReadOptions()
	defer ro.Destroy()
	it := s.db.NewIteratorCF(ro, s.cfIndex())
	defer it.Close()
	n := 0
	for it.SeekToFirst(); it.Valid(); it.Next() {
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
