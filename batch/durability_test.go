package batch_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

// Environment of the child process of TestDurabilityUnderKill.
const (
	envChildDir = "POPSHIM_DURABILITY_DIR"
	envChildRun = "POPSHIM_DURABILITY_RUN"
	// envChildBatchMin is the child's popstore.Options.CommitLogBatchMinBytes
	// (empty: 1 GiB and no record-count rule, so every batch keeps its
	// records in the WAL; "-1": every batch's records go to the commit log).
	envChildBatchMin = "POPSHIM_DURABILITY_CLOG_BATCH_MIN"
	submitters       = 8
	window           = 32 // outstanding ops per submitter
)

// durableOp describes the writes of op (run, s, seq): one message appended to
// queue s%4 of topic D, one checkpoint, the consumer offset of queue
// run*submitters+s set to seq, and (every 5th op) the delete of the
// checkpoint written 5 ops earlier.
func durableOp(run, s, seq int) func(tx *popstore.Txn) error {
	return func(tx *popstore.Txn) error {
		qid := int32(s % 4)
		body := []byte(fmt.Sprintf("%d:%d:%d", run, s, seq))
		if _, _, err := tx.AppendMessage("D", qid, popstoretest.Record("D", qid, 1, body)); err != nil {
			return err
		}
		if err := tx.PutCheckpoint(popstore.Checkpoint{Key: durableKey(run, s, seq), PopTimeMillis: int64(seq)}); err != nil {
			return err
		}
		if seq%5 == 0 && seq >= 5 {
			if err := tx.DeleteCheckpoint(durableKey(run, s, seq-5)); err != nil {
				return err
			}
		}
		return tx.SetConsumerOffset("G", "D", int32(run*submitters+s), int64(seq))
	}
}

func durableKey(run, s, seq int) popstore.CheckpointKey {
	return popstore.CheckpointKey{VisibleAtMillis: 1000 + int64(seq), Group: fmt.Sprintf("G%d", run), Topic: "D", QueueId: int32(s), QueueOffset: int64(seq)}
}

// TestDurabilityChild is the child process: it writes until killed and
// prints "ok run s seq" for each op reported durable.
func TestDurabilityChild(t *testing.T) {
	dir := os.Getenv(envChildDir)
	if dir == "" {
		t.Skip("only runs as the child of TestDurabilityUnderKill")
	}
	run, _ := strconv.Atoi(os.Getenv(envChildRun))
	time.AfterFunc(2*time.Minute, func() { os.Exit(3) }) // never outlive a lost parent
	batchMin, _ := strconv.Atoi(os.Getenv(envChildBatchMin))
	minRecords := 0
	if batchMin == 0 {
		batchMin, minRecords = 1<<30, -1 // inline whatever the batch
	}
	store, err := popstore.Open(popstore.Options{Dir: dir, CommitLogBatchMinBytes: batchMin, CommitLogBatchMinRecords: minRecords})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(2)
	}
	w, err := batch.New(store, batch.Options{}, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "writer:", err)
		os.Exit(2)
	}
	lines := make(chan string, 1<<16)
	go func() {
		// Write errors are ignored: the parent reads until it kills this
		// process, so a failed write only means the parent has gone; the
		// loop keeps draining lines so Done callbacks never block.
		out := bufio.NewWriter(os.Stdout)
		for l := range lines {
			_, _ = out.WriteString(l)
			if len(lines) == 0 {
				_ = out.Flush() // everything reported so far is on the pipe
			}
		}
	}()
	for s := 0; s < submitters; s++ {
		go func(s int) {
			slots := make(chan struct{}, window)
			for seq := 0; ; seq++ {
				slots <- struct{}{}
				seq := seq
				op := &batch.Op{Lane: batch.Lane(s % 3), Apply: durableOp(run, s, seq), Done: func(err error) {
					if err == nil {
						lines <- fmt.Sprintf("ok %d %d %d\n", run, s, seq)
					}
					<-slots
				}}
				for w.Submit(op) != nil {
					time.Sleep(time.Millisecond)
				}
			}
		}(s)
	}
	select {} // until SIGKILL
}

// TestDurabilityUnderKill kill -9s a writing child at several points and
// checks after each that every op it reported complete is in the reopened
// database, with contiguous queue offsets. Runs share one directory, so each
// also recovers from the previous crash. Once with every batch keeping its
// records in the WAL and once with every batch writing them to the commit
// log.
func TestDurabilityUnderKill(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	for _, batchMin := range []string{"", "-1"} {
		t.Run("commitLogBatchMin="+batchMin, func(t *testing.T) {
			t.Setenv(envChildBatchMin, batchMin)
			dir := durabilityUnderKill(t)
			segs, err := filepath.Glob(filepath.Join(dir, "commitlog", "????????????????????"))
			require.NoError(t, err)
			require.Equal(t, batchMin == "-1", len(segs) > 0, "commit-log segments: %v", segs)
		})
	}
}

// durabilityUnderKill runs the kills and checks; it returns the directory.
func durabilityUnderKill(t *testing.T) string {
	dir := t.TempDir()
	reported := map[[3]int]bool{}
	for run, killAt := range []int{1, 150, 1500, 6000} {
		n := runChildUntil(t, dir, run, killAt, reported)
		t.Logf("run %d: killed after %d reported completions (%d total)", run, killAt, n)
		require.GreaterOrEqual(t, n, killAt, "run %d: child reported %d completions", run, n)
		verifyDurable(t, dir, reported)
	}
	return dir
}

// runChildUntil starts the child, reads completions until killAt, kills it
// with SIGKILL, reads what was already printed, and returns the count.
func runChildUntil(t *testing.T, dir string, run, killAt int, reported map[[3]int]bool) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDurabilityChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), envChildDir+"="+dir, envChildRun+"="+strconv.Itoa(run))
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(stdout)
	n := 0
	killed := false
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 4 || f[0] != "ok" {
			continue
		}
		var k [3]int
		for i := range k {
			k[i], _ = strconv.Atoi(f[i+1])
		}
		reported[k] = true
		n++
		if n >= killAt && !killed {
			require.NoError(t, cmd.Process.Kill()) // SIGKILL
			killed = true
		}
	}
	_ = cmd.Wait()
	require.True(t, killed, "child exited before %d completions (got %d)", killAt, n)
	return n
}

func verifyDurable(t *testing.T, dir string, reported map[[3]int]bool) {
	t.Helper()
	store, err := popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	defer store.Close()
	bodies := map[string]bool{}
	for q := int32(0); q < 4; q++ {
		max := store.MaxOffset("D", q)
		recs, next, err := store.ReadMessages("D", q, 0, int(max)+1, 1<<30)
		require.NoError(t, err)
		require.Equal(t, max, next)
		for i, r := range recs {
			require.Equal(t, int64(i), popstoretest.QueueOffset(r), "queue %d offsets contiguous", q)
			bodies[string(popstoretest.Body(r))] = true
		}
	}
	cks, err := store.ScanCheckpoints(0, 1<<62, 1<<30)
	require.NoError(t, err)
	present := map[popstore.CheckpointKey]bool{}
	for _, c := range cks {
		present[c.Key] = true
	}
	maxSeq := map[[2]int]int{}
	lost := 0
	for k := range reported {
		run, s, seq := k[0], k[1], k[2]
		if !bodies[fmt.Sprintf("%d:%d:%d", run, s, seq)] {
			t.Errorf("op %v reported durable but its message is missing", k)
			lost++
		}
		// Op seq+5 deletes this checkpoint; it may be durable without having
		// been reported, which its message (same WriteBatch) tells.
		deletedLater := seq%5 == 0 && bodies[fmt.Sprintf("%d:%d:%d", run, s, seq+5)]
		if !deletedLater && !present[durableKey(run, s, seq)] {
			t.Errorf("op %v reported durable but its checkpoint is missing", k)
			lost++
		}
		if seq%5 == 0 && seq >= 5 && present[durableKey(run, s, seq-5)] {
			t.Errorf("op %v reported durable but its delete of seq %d is missing", k, seq-5)
		}
		if seq > maxSeq[[2]int{run, s}] {
			maxSeq[[2]int{run, s}] = seq
		}
	}
	require.Zero(t, lost, "mutations reported complete but missing after kill -9")
	for rs, seq := range maxSeq {
		off, ok := store.ConsumerOffset("G", "D", int32(rs[0]*submitters+rs[1]))
		require.True(t, ok)
		require.GreaterOrEqual(t, off, int64(seq), "consumer offset of run %d submitter %d", rs[0], rs[1])
	}
}
