package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/linxGnu/grocksdb"
)

// StorageOptions configure RunRawStorage.
type StorageOptions struct {
	// Dir is where the temporary RocksDB and fsync probe file are created
	// (a fresh subdirectory, removed afterwards): put it on the disk the
	// broker uses. --data-dir, default os.TempDir().
	Dir string
	// BatchOps is the number of ACK-shaped mutations per synced WriteBatch.
	// --batch-ops, default 4096 (popshim's --batch-max-ops).
	BatchOps int
	// Duration is the length of the batch loop. --duration, default 5s.
	Duration time.Duration
	// FsyncSamples is the number of 4 KiB write+fdatasync probes, and of
	// single-mutation synced writes. --fsync-samples, default 200.
	FsyncSamples int
	// Label, JSON and Out as in Options.
	Label string
	JSON  string
	Out   io.Writer
}

// StorageResult is the storage limit measured on this machine.
type StorageResult struct {
	// BatchOps mutations (one Delete of a 51-byte checkpoint-shaped key
	// each, what popshim writes for an ACK) per synced WriteBatch.
	BatchOps int `json:"batch_ops"`
	Batches  int `json:"batches"`
	// OpsPerSec is mutations per second through back-to-back synced
	// WriteBatches of BatchOps: the raw storage limit for ACKs.
	OpsPerSec float64 `json:"ops_per_sec"`
	// BatchWriteUs is the duration of one synced WriteBatch write, µs.
	BatchWriteUs Latency `json:"batch_write_us"`
	// SingleWriteUs is one synced db.Write of a single mutation, µs: the
	// cost every ACK pays when nothing is batched.
	SingleWriteUs Latency `json:"single_write_us"`
	// FdatasyncUs is a 4 KiB append plus fdatasync on a plain file, µs: the
	// disk's fsync latency.
	FdatasyncUs Latency `json:"fdatasync_us"`
}

// RunRawStorage measures the storage limit with RocksDB directly (no
// popshim code): back-to-back synced WriteBatches of o.BatchOps Deletes,
// then o.FsyncSamples single-mutation synced writes, then o.FsyncSamples
// 4 KiB write+fdatasync probes on a plain file. Everything lives in a fresh
// temporary directory under o.Dir, removed at the end. Errors: directory
// (creating it, or removing it at the end: then the report is returned
// too), RocksDB open or write, fdatasync failures, output files.
func RunRawStorage(ctx context.Context, o StorageOptions) (_ *Report, err error) {
	if o.BatchOps <= 0 {
		o.BatchOps = 4096
	}
	if o.Duration <= 0 {
		o.Duration = 5 * time.Second
	}
	if o.FsyncSamples <= 0 {
		o.FsyncSamples = 200
	}
	if o.Label == "" {
		o.Label = "raw-storage"
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	dir, err := os.MkdirTemp(o.Dir, "popshim-rawstorage-")
	if err != nil {
		return nil, fmt.Errorf("bench: raw storage dir: %w", err)
	}
	defer func() {
		if rerr := os.RemoveAll(dir); rerr != nil {
			err = errors.Join(err, fmt.Errorf("bench: remove raw storage dir: %w", rerr))
		}
	}()
	cpu := startCPU(nil)
	t0 := time.Now()
	res := &StorageResult{BatchOps: o.BatchOps}
	if err := rocksLimits(ctx, dir, &o, res); err != nil {
		return nil, err
	}
	fd, err := fdatasyncLatency(dir, o.FsyncSamples)
	if err != nil {
		return nil, err
	}
	res.FdatasyncUs = fd
	wall := time.Since(t0).Seconds()
	r := &Report{Mode: "raw-storage", Label: o.Label, Target: o.Dir, Started: t0, Seconds: wall, Machine: machineInfo(), Storage: res,
		Config: map[string]any{"batch_ops": o.BatchOps, "duration": o.Duration.String(), "fsync_samples": o.FsyncSamples}}
	r.BenchCPU, _ = cpu.finish(wall, nil, nil)
	printSummary(o.Out, r)
	if o.JSON != "" {
		if err := r.WriteJSON(o.JSON); err != nil {
			return r, err
		}
	}
	return r, nil
}

// ackKey writes a checkpoint-shaped key for mutation i into dst:
// visibleAt(8) "bench_group@bench_topic@" queueId(4) '@' offset(8).
func ackKey(dst []byte, i int64) []byte {
	dst = binary.BigEndian.AppendUint64(dst[:0], uint64(1_700_000_000_000+i/64))
	dst = append(dst, "bench_group@bench_topic@"...)
	dst = binary.BigEndian.AppendUint32(dst, uint32(i%8))
	dst = append(dst, '@')
	return binary.BigEndian.AppendUint64(dst, uint64(i))
}

func rocksLimits(ctx context.Context, dir string, o *StorageOptions, res *StorageResult) error {
	opts := grocksdb.NewDefaultOptions()
	defer opts.Destroy()
	opts.SetCreateIfMissing(true)
	db, err := grocksdb.OpenDb(opts, dir+"/db")
	if err != nil {
		return fmt.Errorf("bench: open rocksdb: %w", err)
	}
	defer db.Close()
	wo := grocksdb.NewDefaultWriteOptions()
	defer wo.Destroy()
	wo.SetSync(true)
	wb := grocksdb.NewWriteBatch()
	defer wb.Destroy()
	key := make([]byte, 0, 64)
	var n int64
	batch := newWindow()
	deadline := time.Now().Add(o.Duration)
	begin := time.Now()
	for time.Now().Before(deadline) && ctx.Err() == nil {
		wb.Clear()
		for range o.BatchOps {
			key = ackKey(key, n)
			wb.Delete(key)
			n++
		}
		t := time.Now()
		if err := db.Write(wo, wb); err != nil {
			return fmt.Errorf("bench: synced write: %w", err)
		}
		batch.record(time.Since(t).Microseconds())
		res.Batches++
	}
	res.OpsPerSec = float64(n) / time.Since(begin).Seconds()
	res.BatchWriteUs = latencyOf(batch)
	single := newWindow()
	for range o.FsyncSamples {
		wb.Clear()
		key = ackKey(key, n)
		wb.Delete(key)
		n++
		t := time.Now()
		if err := db.Write(wo, wb); err != nil {
			return fmt.Errorf("bench: synced write: %w", err)
		}
		single.record(time.Since(t).Microseconds())
	}
	res.SingleWriteUs = latencyOf(single)
	return ctx.Err()
}

// fdatasyncLatency appends 4 KiB and calls fdatasync, samples times.
func fdatasyncLatency(dir string, samples int) (l Latency, err error) {
	f, err := os.OpenFile(dir+"/fsync-probe", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return Latency{}, fmt.Errorf("bench: fsync probe: %w", err)
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	buf := make([]byte, 4096)
	w := newWindow()
	for range samples {
		if err := probe(f, buf, w); err != nil {
			return Latency{}, err
		}
	}
	return latencyOf(w), nil
}

func printStorage(out io.Writer, st *StorageResult) {
	fmt.Fprintf(out, "raw storage: %.0f mutations/s in synced WriteBatches of %d (%d batches, write p50 %s ms p99 %s ms)\n",
		st.OpsPerSec, st.BatchOps, st.Batches, ms(st.BatchWriteUs.P50), ms(st.BatchWriteUs.P99))
	fmt.Fprintf(out, "single-mutation synced write: p50 %s ms p99 %s ms (%.0f/s from one writer)\n",
		ms(st.SingleWriteUs.P50), ms(st.SingleWriteUs.P99), 1e6/max(st.SingleWriteUs.Mean, 1))
	fmt.Fprintf(out, "disk: 4 KiB write+fdatasync p50 %s ms p99 %s ms max %s ms\n",
		ms(st.FdatasyncUs.P50), ms(st.FdatasyncUs.P99), ms(st.FdatasyncUs.Max))
}
