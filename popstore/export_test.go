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
