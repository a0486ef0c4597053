package broker

import "testing"

// Size classes: the smallest holds up to 512 bytes, each class doubles,
// and nothing above 64 KiB is pooled.
func TestRecordBufClasses(t *testing.T) {
	for _, tc := range []struct{ n, class int }{
		{0, 0}, {1, 0}, {512, 0}, {513, 1}, {1024, 1}, {1025, 2}, {65536, 7}, {65537, -1}, {1 << 20, -1},
	} {
		if got := recBufClass(tc.n); got != tc.class {
			t.Errorf("recBufClass(%d) = %d, want %d", tc.n, got, tc.class)
		}
		r := getRecordBuf(tc.n)
		if len(r.b) != 0 || cap(r.b) < tc.n {
			t.Errorf("getRecordBuf(%d): len %d cap %d", tc.n, len(r.b), cap(r.b))
		}
		if tc.class >= 0 && cap(r.b) != 1<<(tc.class+recBufMinShift) {
			t.Errorf("getRecordBuf(%d): cap %d, want the class size %d", tc.n, cap(r.b), 1<<(tc.class+recBufMinShift))
		}
	}
}

// A returned buffer is handed out again for a request of its class; a
// regrown (not class-sized) one is dropped.
func TestRecordBufReuse(t *testing.T) {
	reused := false
	for range 100 { // sync.Pool may drop an item (GC); one reuse is enough
		r := getRecordBuf(1000)
		r.b = append(r.b, "x"...)
		putRecordBuf(r)
		if getRecordBuf(700) == r {
			reused = true
			break
		}
	}
	if !reused {
		t.Fatal("a returned 1 KiB buffer was never handed out again")
	}
	odd := &recBuf{b: make([]byte, 0, 1000)}
	putRecordBuf(odd)
	for range 100 {
		if getRecordBuf(1000) == odd {
			t.Fatal("a buffer whose capacity is no class size was pooled")
		}
	}
}
