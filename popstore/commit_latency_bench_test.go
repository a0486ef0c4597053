package popstore_test

import (
	"testing"

	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

// BenchmarkCommitOneMessage commits one 1 KiB message per Txn, one Txn at
// a time (a producer alone on the broker): ns/op is the synced commit's
// latency: by default (a batch this small keeps its record in the WAL),
// with the commit log forced (CommitLogBatchMinBytes -1: its fdatasync,
// then the WAL's) and without it (CommitLogMinBytes -1).
//
//	go test -run '^$' -bench CommitOneMessage -benchtime 3000x ./popstore/
func BenchmarkCommitOneMessage(b *testing.B) {
	for _, c := range []struct {
		name       string
		min, batch int
	}{{"default", 0, 0}, {"commitlog", 0, -1}, {"wal", -1, 0}} {
		b.Run(c.name, func(b *testing.B) {
			s, _ := popstoretest.Open(b, popstore.Options{CommitLogMinBytes: c.min, CommitLogBatchMinBytes: c.batch, RetentionMillis: -1})
			body := make([]byte, 1024)
			b.ResetTimer()
			for range b.N {
				tx := s.Begin()
				if _, _, err := tx.AppendMessage("T", 0, popstoretest.Record("T", 0, 1, body)); err != nil {
					b.Fatal(err)
				}
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
