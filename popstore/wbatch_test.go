package popstore

import (
	"bytes"
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
			if err != ErrNotFound {
				t.Errorf("%s: got %q, %v; want absent", k, v, err)
			}
			continue
		}
		if err != nil || string(v) != want {
			t.Errorf("%s: got %q, %v; want %q", k, v, err, want)
		}
	}
}
