package popstore

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/linxGnu/grocksdb"
)

// Our serialized batch is byte-for-byte what RocksDB's own WriteBatch API
// produces for the same records (order kept when a range delete is present).
func TestBatchRepMatchesRocksDBEncoding(t *testing.T) {
	s, err := Open(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var b batchRep
	wb := grocksdb.NewWriteBatch()
	defer wb.Destroy()
	big := bytes.Repeat([]byte{7}, 300) // two-byte varint length
	b.put(cfiPop, []byte("k2"), []byte("v2"))
	wb.PutCF(s.cfPop(), []byte("k2"), []byte("v2"))
	b.del(cfiOffsets, []byte("k1"))
	wb.DeleteCF(s.cfOffsets(), []byte("k1"))
	b.put(cfiMessages, big, big)
	wb.PutCF(s.cfMessages(), big, big)
	b.delRange(cfiMessages, []byte("a"), []byte("b"))
	wb.DeleteRangeCF(s.cfMessages(), []byte("a"), []byte("b"))
	b.put(cfiMeta, []byte("m"), nil)
	wb.PutCF(s.cfMeta(), []byte("m"), nil)
	if got, want := b.encode(&s.cfIDs), wb.Data(); !bytes.Equal(got, want) {
		t.Fatalf("encoding differs\n got %x\nwant %x", got, want)
	}
}

// Sorting keeps the final state: records of one key keep their order.
func TestBatchRepSortIsStablePerKey(t *testing.T) {
	s, err := Open(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var b batchRep
	b.put(cfiPop, []byte("z"), []byte("1"))
	b.put(cfiPop, []byte("a"), []byte("1"))
	b.del(cfiPop, []byte("z"))              // z: put then delete → absent
	b.put(cfiPop, []byte("a"), []byte("2")) // a: last put wins
	b.del(cfiPop, []byte("m"))
	b.put(cfiPop, []byte("m"), []byte("3")) // m: delete then put → present
	b.put(cfiMessages, []byte("q"), []byte("4"))
	rep := b.encode(&s.cfIDs)
	if bytes.Equal(rep, b.rep) {
		t.Fatal("expected a reordered batch")
	}
	wb := grocksdb.WriteBatchFrom(rep)
	defer wb.Destroy()
	var order []string
	for it := wb.NewIterator(); it.Next(); {
		order = append(order, string(it.Record().Key))
	}
	if got := strings.Join(order, ""); got != "qaammzz" {
		t.Fatalf("sorted order %q, want messages first then pop keys a a m m z z", got)
	}
	if err := s.db.Write(s.wo, wb); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"a": "2", "m": "3", "z": ""} {
		v, err := s.getCF(s.cfPop(), []byte(k))
		if want == "" {
			if !errors.Is(err, ErrNotFound) {
				t.Errorf("%s: got %q, %v; want absent", k, v, err)
			}
			continue
		}
		if err != nil || string(v) != want {
			t.Errorf("%s: got %q, %v; want %q", k, v, err, want)
		}
	}
}

// The encoded batch is ordered by (column family, key as bytes.Compare,
// position) for keys of any length, including keys shorter than the 8-byte
// prefix and keys that share it.
func TestBatchRepSortOrderMatchesBytesCompare(t *testing.T) {
	s, err := Open(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	type rec struct {
		cf  uint8
		key string
		pos int
	}
	var want []rec
	var b batchRep
	for i := 0; i < 2000; i++ {
		k := make([]byte, rng.IntN(13)) // 0..12 bytes, alphabet of 3: many shared prefixes
		for j := range k {
			k[j] = "\x00ab"[rng.IntN(3)]
		}
		cf := uint8(cfiPop)
		if rng.IntN(4) == 0 {
			cf = cfiOffsets
		}
		b.put(cf, k, []byte{byte(i)})
		want = append(want, rec{cf, string(k), i})
	}
	slices.SortFunc(want, func(x, y rec) int {
		if x.cf != y.cf {
			return int(x.cf) - int(y.cf)
		}
		if c := strings.Compare(x.key, y.key); c != 0 {
			return c
		}
		return x.pos - y.pos
	})
	wb := grocksdb.WriteBatchFrom(b.encode(&s.cfIDs))
	defer wb.Destroy()
	i := 0
	for it := wb.NewIterator(); it.Next(); i++ {
		r := it.Record()
		if string(r.Key) != want[i].key || r.Value[0] != byte(want[i].pos) {
			t.Fatalf("record %d: key %q value %d, want key %q value %d", i, r.Key, r.Value[0], want[i].key, byte(want[i].pos))
		}
	}
	if i != len(want) {
		t.Fatalf("%d records, want %d", i, len(want))
	}
}
