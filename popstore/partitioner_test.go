package popstore_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

// TestStreamPrefixLen pins which bytes of a messages-family key the
// partitioner compares: topic 0x00 queueId for message keys, 0x00 kind
// for index keys.
func TestStreamPrefixLen(t *testing.T) {
	mk := func(topic string, q uint32, off uint64) []byte {
		k := append([]byte(topic), 0)
		k = binary.BigEndian.AppendUint32(k, q)
		return binary.BigEndian.AppendUint64(k, off)
	}
	require.Equal(t, len("TopicA")+5, popstore.StreamPrefixLen(mk("TopicA", 3, 99)))
	require.Equal(t, 2, popstore.StreamPrefixLen(append([]byte{0, 'P'}, make([]byte, 8)...)))
	require.Equal(t, 2, popstore.StreamPrefixLen(append([]byte{0, 'T'}, make([]byte, 16)...)))
	require.Equal(t, 3, popstore.StreamPrefixLen([]byte("abc")), "no 0x00: the whole key")
	require.Equal(t, 4, popstore.StreamPrefixLen([]byte("ab\x00q")), "short queue id: the whole key")
	require.Equal(t, 0, popstore.StreamPrefixLen(nil))
}

// TestShouldPartition pins the partitioner's rule: within a stream never;
// at a stream change once the file holds 1 MiB; always around index
// streams and queues whose keys say they may have 65,536 older ones.
func TestShouldPartition(t *testing.T) {
	mk := func(topic string, q uint32, off uint64) []byte {
		k := append([]byte(topic), 0)
		k = binary.BigEndian.AppendUint32(k, q)
		return binary.BigEndian.AppendUint64(k, off)
	}
	phys := func(p uint64) []byte { return binary.BigEndian.AppendUint64([]byte{0, 'P'}, p) }
	for _, c := range []struct {
		name      string
		prev, cur []byte
		size      uint64
		want      bool
	}{
		{"same queue, big file", mk("A", 0, 1<<20), mk("A", 0, 1<<20+1), 64 << 20, false},
		{"same index stream", phys(10), phys(20), 64 << 20, false},
		{"young queues, small file", mk("A", 0, 5), mk("A", 1, 0), 1<<20 - 1, false},
		{"young queues, 1 MiB file", mk("A", 0, 5), mk("A", 1, 0), 1 << 20, true},
		{"next topic, small file", mk("A", 7, 5), mk("B", 0, 3), 100, false},
		{"into a long queue", mk("A", 0, 5), mk("A", 1, 1<<16), 100, true},
		{"out of a long queue", mk("A", 0, 1<<16), mk("A", 1, 3), 100, true},
		{"just short of long", mk("A", 0, 5), mk("A", 1, 1<<16-1), 100, false},
		{"index to queue", phys(10), mk("A", 0, 0), 100, true},
		{"index to index", phys(10), []byte{0, 'T', 1}, 100, true},
	} {
		require.Equal(t, c.want, popstore.ShouldPartition(c.prev, c.cur, c.size), c.name)
	}
}

// TestCompactionCutsFilesAtStreams writes interleaved rounds to six busy
// queues of two topics (random bodies inline in table files, over 1 MiB
// per queue per compaction) and four quiet ones, flushing after each round,
// compacts, and checks that no table file below L0 mixes a busy queue
// with another stream, that the quiet queues share files, that every
// queue reads back whole, and that the same holds after more rounds and
// another compaction.
func TestCompactionCutsFilesAtStreams(t *testing.T) {
	s, _ := popstoretest.Open(t, popstore.Options{BlobMinBytes: -1, CommitLogMinBytes: -1})
	type queue struct {
		topic string
		qid   int32
		n     int // messages per round
	}
	var queues []queue
	for _, q := range []int32{0, 1, 2, 3} {
		queues = append(queues, queue{"A", q, 100})
	}
	queues = append(queues, queue{"B", 0, 100}, queue{"B", 1, 100})
	for _, q := range []int32{0, 1, 2, 3} {
		queues = append(queues, queue{"C", q, 2})
	}
	const bodyBytes = 4 << 10
	bodyOf := func(q queue, r, i int) []byte {
		head := fmt.Sprintf("%s-%d-%d-%d:", q.topic, q.qid, r, i)
		rng := rand.New(rand.NewPCG(uint64(len(head)), uint64(r)<<32|uint64(q.qid)<<16|uint64(i))) //nolint:gosec // test data
		b := make([]byte, bodyBytes)
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		return append([]byte(head), b...)
	}
	round := func(r int) {
		commit(t, s, func(tx *popstore.Txn) error {
			for i := range 100 {
				for _, q := range queues {
					if i >= q.n {
						continue
					}
					if _, _, err := tx.AppendMessage(q.topic, q.qid, popstoretest.Record(q.topic, q.qid, 1000, bodyOf(q, r, i))); err != nil {
						return err
					}
				}
			}
			return nil
		})
		require.NoError(t, s.FlushMemtables(true))
	}
	check := func(rounds int) {
		mixed := 0
		for _, f := range s.MessagesTableFiles() {
			if f.Level == 0 {
				continue
			}
			n := popstore.StreamPrefixLen(f.SmallestKey)
			if n == popstore.StreamPrefixLen(f.LargestKey) && bytes.Equal(f.SmallestKey[:n], f.LargestKey[:n]) {
				continue
			}
			mixed++
			require.True(t, bytes.HasPrefix(f.SmallestKey, []byte("C\x00")) && bytes.HasPrefix(f.LargestKey, []byte("C\x00")),
				"file %s at L%d mixes a busy stream: %q … %q", f.Name, f.Level, f.SmallestKey, f.LargestKey)
		}
		require.Equal(t, 1, mixed, "the quiet queues share one file")
		for _, q := range queues {
			recs, next, err := s.ReadMessages(q.topic, q.qid, 0, rounds*q.n+1, 1<<30)
			require.NoError(t, err)
			require.Len(t, recs, rounds*q.n)
			require.Equal(t, int64(rounds*q.n), next)
			for i, rec := range recs {
				require.True(t, bytes.Equal(bodyOf(q, i/q.n, i%q.n), popstoretest.Body(rec)), "%s/%d message %d", q.topic, q.qid, i)
			}
		}
	}
	for r := range 3 {
		round(r)
	}
	s.CompactMessages()
	check(3)
	for r := 3; r < 6; r++ {
		round(r)
	}
	s.CompactMessages()
	check(6)
}
