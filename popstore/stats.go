package popstore

import (
	"strconv"
	"strings"
)

// WALSyncs returns RocksDB's count of WAL syncs (ticker rocksdb.wal.synced)
// since Open; ok=false unless Options.Statistics was set. Concurrent writes
// joined into one RocksDB write group share one sync, so this is the real
// fsync count. Any goroutine; parses the statistics dump (not cheap).
func (s *Store) WALSyncs() (n uint64, ok bool) {
	if !s.stats || !s.readGuard() {
		return 0, false
	}
	defer s.readDone()
	return tickerCount(s.opts.GetStatisticsString(), "rocksdb.wal.synced")
}

// tickerCount finds "name COUNT : n" in a RocksDB statistics dump.
func tickerCount(dump, name string) (uint64, bool) {
	for _, line := range strings.Split(dump, "\n") {
		if rest, found := strings.CutPrefix(line, name+" COUNT : "); found {
			n, err := strconv.ParseUint(strings.TrimSpace(rest), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
