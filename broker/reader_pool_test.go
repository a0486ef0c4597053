package broker

import (
	"strings"
	"testing"
	"time"
)

// TestReaderPoolRecoversPanics: a job that panics is reported with its
// stack and the same (single) worker runs the next job.
func TestReaderPoolRecoversPanics(t *testing.T) {
	type report struct {
		v     any
		stack string
	}
	reports := make(chan report, 1)
	p := newReaderPool(1, 4, 4, func(v any, stack []byte) { reports <- report{v, string(stack)} })
	defer p.close()
	if !p.submit(func() { panic("boom") }) {
		t.Fatal("submit refused")
	}
	select {
	case r := <-reports:
		if r.v != "boom" || !strings.Contains(r.stack, "reader_pool_test.go") {
			t.Fatalf("report %v without the job's stack:\n%s", r.v, r.stack)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("panic not reported")
	}
	ran := make(chan struct{})
	if !p.submit(func() { close(ran) }) {
		t.Fatal("submit refused")
	}
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("the worker did not survive the panic")
	}
}
