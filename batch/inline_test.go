package batch_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/popstore"
)

// A small batch is completed on the writer goroutine only when the
// completer has nothing pending: here batch 2 (40 ops, handed to the
// completer) is stuck in its first Done while batch 3 (one op) is written,
// and batch 3 must still complete after every op of batch 2, and batch 4
// after it.
func TestInlineCompletionKeepsBatchOrder(t *testing.T) {
	f := newFixture(t, batch.Options{})
	release := f.stall(t, 1)
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	unblock := make(chan struct{})
	inDone := make(chan struct{})
	submit := func(id int, first bool) {
		wg.Add(1)
		require.NoError(t, f.w.Submit(&batch.Op{Lane: batch.LaneForeground,
			Apply: func(tx *popstore.Txn) error { return tx.PutMetaValue(fmt.Sprintf("inline_%d", id), []byte{1}) },
			Done: func(err error) {
				require.NoError(t, err)
				if first {
					close(inDone)
					<-unblock
				}
				mu.Lock()
				order = append(order, id)
				mu.Unlock()
				wg.Done()
			}}))
	}
	for i := range 40 { // batch 2: more than inlineCompleteOps
		submit(i, i == 0)
	}
	release()
	<-inDone          // the completer is inside batch 2's first Done
	submit(40, false) // batch 3, written while batch 2 is not complete
	// Batch 4's write starts only after the writer has dealt with batch 3
	// (completed inline or handed over).
	release4 := f.gate.hold(4)
	f.gate.waitEntered(t, 3)
	submit(41, false)
	f.gate.waitEntered(t, 4)
	unblock <- struct{}{}
	release4()
	wg.Wait()
	want := make([]int, 42)
	for i := range want {
		want[i] = i
	}
	require.Equal(t, want, order, "batches complete in write order")
	require.Equal(t, uint64(4), f.w.Stats().Batches)
}
