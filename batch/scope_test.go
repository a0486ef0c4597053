package batch_test

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

// countingScope records Begin and End and whether a scope is open.
type countingScope struct {
	mu          sync.Mutex
	open        bool
	begins, end int
	outside     int // Done calls seen with no scope open
}

func (c *countingScope) Begin() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open {
		panic("Begin inside an open scope")
	}
	c.open = true
	c.begins++
}

func (c *countingScope) End() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.open = false
	c.end++
}

func (c *countingScope) done() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.open {
		c.outside++
	}
}

// Every op of a group-mode batch is completed inside its CompletionScope:
// Begin before the first Done, End after the last, one batch at a time,
// whether the completer or (small batches) the writer completes it.
func TestCompletionScopeBracketsBatches(t *testing.T) {
	f := newFixture(t, batch.Options{})
	sc := &countingScope{}
	f.w.SetCompletionScope(sc)
	var wg sync.WaitGroup
	submit := func(id int) {
		wg.Add(1)
		require.NoError(t, f.w.Submit(&batch.Op{Lane: batch.LaneForeground,
			Apply: func(tx *popstore.Txn) error { return tx.PutMetaValue(fmt.Sprintf("scope_%d", id), []byte{1}) },
			Done:  func(err error) { assert.NoError(t, err); sc.done(); wg.Done() }}))
	}
	release := f.stall(t, 1)
	for i := range 100 { // one large batch, completed by the completer
		submit(i)
	}
	release()
	wg.Wait()
	for i := 100; i < 110; i++ { // small batches, completed inline
		submit(i)
		wg.Wait()
	}
	closed := func() bool { // End runs after the last Done returned
		sc.mu.Lock()
		defer sc.mu.Unlock()
		return !sc.open && sc.begins == sc.end
	}
	require.Eventually(t, closed, 10*time.Second, time.Millisecond)
	sc.mu.Lock()
	require.Zero(t, sc.outside, "Done outside the scope")
	require.GreaterOrEqual(t, sc.begins, 11)
	sc.mu.Unlock()

	f.w.SetCompletionScope(nil)
	submit(200)
	wg.Wait()
	sc.mu.Lock()
	defer sc.mu.Unlock()
	require.Equal(t, 1, sc.outside, "no scope after SetCompletionScope(nil)")
}

// The retention loop unmaps the commit-log pages that reads mapped every
// MappedReleaseInterval (here 20 ms), between retention passes (here an
// hour apart) and with retention off: a store whose 4 MiB of records were
// read has them mapped, then not. The records are 16 KiB: from 32 KiB reads
// use pread and map nothing.
func TestRetentionLoopReleasesMappedPages(t *testing.T) {
	for _, every := range []time.Duration{time.Hour, -1} {
		t.Run(fmt.Sprintf("retention=%v", every), func(t *testing.T) { testReleasesMappedPages(t, every) })
	}
}

func testReleasesMappedPages(t *testing.T, retentionEvery time.Duration) {
	dir := t.TempDir()
	store, err := popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	defer store.Close()
	tx := store.Begin()
	const n = 256
	for i := 0; i < n; i++ { // one 4 MiB batch: the commit log
		_, _, err := tx.AppendMessage("T", 0, popstoretest.Record("T", 0, 1000, make([]byte, 16<<10)))
		require.NoError(t, err)
	}
	require.NoError(t, tx.Commit())
	read := func() {
		for i := 0; i < n; i++ {
			recs, _, err := store.ReadMessages("T", 0, int64(i), 1, 1<<20)
			require.NoError(t, err)
			require.Len(t, recs, 1)
		}
	}
	clog := filepath.Join(dir, "commitlog")
	read()
	require.Greater(t, popstoretest.MappedRSS(t, clog), int64(2<<20))
	w, err := batch.New(store, batch.Options{RetentionInterval: retentionEvery, MappedReleaseInterval: 20 * time.Millisecond}, nil)
	require.NoError(t, err)
	defer w.Close()
	require.Eventually(t, func() bool { return popstoretest.MappedRSS(t, clog) < 64<<10 }, 10*time.Second, 10*time.Millisecond)
}
