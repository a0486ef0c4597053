package bench

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

// TestLastErrorMixedTypes stores errors of different concrete types from
// several goroutines, as a load loop does when a transport error follows
// a reply error (an atomic.Value panicked there), and reads the last one.
func TestLastErrorMixedTypes(t *testing.T) {
	var l lastError
	if l.Load() != nil {
		t.Fatal("zero lastError holds an error")
	}
	l.Store(nil)
	if l.Load() != nil {
		t.Fatal("Store(nil) recorded an error")
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				if (g+i)%2 == 0 {
					l.Store(errors.New("plain"))
				} else {
					l.Store(fmt.Errorf("wrapped %d: %w", i, errors.ErrUnsupported))
				}
			}
		}(g)
	}
	wg.Wait()
	if l.Load() == nil {
		t.Fatal("no error after 800 stores")
	}
	want := fmt.Errorf("last: %w", errors.ErrUnsupported)
	l.Store(want)
	if got := l.Load(); !errors.Is(got, want) || !errors.Is(got, errors.ErrUnsupported) {
		t.Fatalf("Load() = %v, want %v", got, want)
	}
}
