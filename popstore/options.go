package popstore

import (
	"fmt"
	"syscall"

	"github.com/linxGnu/grocksdb"
)

// popFamilyOptions are the RocksDB option overrides (an options string) of
// the pop and offsets column families; see Open.
const popFamilyOptions = "memtable_insert_with_hint_prefix_extractor=rocksdb.CappedPrefix.1;compression=kNoCompression"

// indexFamilyOptions are the RocksDB option overrides of the index family
// (the key index, index.go). Its keys arrive in random order (business
// keys, message ids), and a skiplist memtable insert at a random position
// cost about 5.7 µs of the writer's CPU on the 2-vCPU machine, against
// 0.4 µs for an append to a vector memtable (1 M random 70-byte keys in
// sorted batches of 256, thread CPU time). The vector is sorted when it is
// flushed and when a query opens an iterator on it: with 16 MiB a query on
// a full memtable (BenchmarkQueryKeyIndex) took 0.6–0.74 s, with 4 MiB
// 43–66 ms, for more frequent (smaller) flushes. Uncompressed, as the pop
// family: table blocks already share key prefixes, and snappy in those
// flushes and their compactions costs the server's CPU.
//
// Its L0 files (4 MiB flushes) overlap the current minute of the index, so
// each L0→L1 compaction rewrites that minute's L1 part: with RocksDB's
// default trigger of 4 L0 files, 4-minute runs of 1 KiB produce
// (2026-12-05) compacted 39 bytes of index per message on top of 32
// flushed; merging 16 at a time, 32. The write stall levels move up with
// the trigger (defaults 20 and 36). A QUERY_MESSAGE seeks up to 16 L0
// files per minute instead of 4. Four memtables instead of two: at 60 k
// msgs/s one fills every second, and a flush that waits for a thread
// (another family's flush) no longer stops every write at once.
const indexFamilyOptions = "memtable=vector;write_buffer_size=4194304;max_write_buffer_number=4;compression=kNoCompression;" +
	"level0_file_num_compaction_trigger=16;level0_slowdown_writes_trigger=40;level0_stop_writes_trigger=64"

// backgroundFlushes and backgroundCompactions are RocksDB's flush and
// compaction thread counts (setBackgroundThreads).
const (
	backgroundFlushes     = 2
	backgroundCompactions = 3
)

// setBackgroundThreads sets RocksDB's flush and compaction threads
// (backgroundFlushes, backgroundCompactions). RocksDB's default (two
// jobs) is one flush and one compaction thread for all families. Under
// sustained produce the messages family's compactions run for tens of
// seconds, and the index family (a 4 MiB memtable filled every second
// at 60 k msgs/s) then waits: its two memtables fill before the flush
// thread is free, which stops every write, and its L0 files pile up
// towards the slowdown level. In 10 minutes of 1 KiB produce
// (2026-12-05) that stopped writes 43 times, and throughput fell from
// 68 k msgs/s in minute 1 to 29 k in minute 10 (6.5 k in the last 10 s)
// while the CPU was 40 % idle. Two flush and three compaction threads let a family's flush or
// compaction run beside another's. These two settings, deprecated in
// favour of max_background_jobs, are the only way to two flush threads
// without eight jobs: RocksDB 7.8 gives a quarter of the jobs to flushes.
func setBackgroundThreads(o *grocksdb.Options) {
	o.SetMaxBackgroundFlushes(backgroundFlushes)         //nolint:staticcheck // see above
	o.SetMaxBackgroundCompactions(backgroundCompactions) //nolint:staticcheck // see above
}

// DefaultBlobMinBytes is Options.BlobMinBytes's default: records of at
// least 512 bytes (bodies from about 350 bytes, with the record's header
// and properties) live in blob files.
const DefaultBlobMinBytes = 512

// blobFileBytes is the target size of one blob file (RocksDB's default).
const blobFileBytes = 256 << 20

// DefaultMessagesMemtableBytes and messagesL0Trigger size the messages
// family's LSM tree (RocksDB's defaults: 64 MiB and 4). With the bodies in
// blob files its table files hold keys, blob references and
// physical-offset entries, ~50 bytes per message; but every L0 file still
// spans all queues' key ranges (they interleave), so each L0→L1
// compaction rewrites all of L1. Twice the memtable and twice the L0 files
// per compaction make those compactions a quarter as frequent: in 2-minute
// runs of 1 KiB produce (2026-12-04) 2.75 instead of 2.97 disk bytes per
// payload byte and 23 instead of 33 µs of server CPU per message, pop+ack
// unchanged. Sixteen L0 files per compaction (2026-12-05, 4-minute runs,
// with the index family's trigger also at 16): 49 instead of 83 bytes of
// table files compacted per message, 2.65 instead of 2.69 disk bytes per
// payload byte in all, pop+ack 15.0 and 14.2 against 14.9 and 14.5 µs (two
// interleaved pairs); a POP's seek visits up to 16 L0 files. The write
// stall levels (RocksDB's defaults 20 and 36 L0 files) move up with it.
// Memory: up to two 128 MiB memtables under sustained produce
// (Options.MessagesMemtableBytes sets a smaller one).
const (
	// DefaultMessagesMemtableBytes is Options.MessagesMemtableBytes's
	// default, bytes.
	DefaultMessagesMemtableBytes = 128 << 20
	messagesL0Trigger            = 16
	messagesL0Slowdown           = 40
	messagesL0Stop               = 64
)

// Blob files for the messages family. With every value inline, a message
// body was written to the WAL, again by the flush, and again by every
// compaction that moved its table file down a level; and since the
// queues' keys interleave (topic, queueId, offset), every L0 file spans
// most of L1, so each L0→L1 compaction rewrote nearly all of L1. Sustained
// 1 KiB produce wrote 4–6 disk bytes per payload byte and slowed down as
// the tree grew. With blob files a flush writes each value once into a
// blob file and keeps only the key and a ~20-byte reference in the table
// files, which are what compactions rewrite: a body reaches the disk
// twice (WAL and blob file).
//
// Blob garbage collection stays off: messages are removed by retention,
// oldest first, so whole blob files become garbage together and RocksDB
// drops a blob file once compaction has dropped every reference to it
// (CompactTrimmed compacts the trimmed ranges); GC would instead copy
// live bodies of the oldest files forward on every compaction, writing
// them again. A long-lived entry (a timer due in weeks, a half message
// never resolved) keeps its one blob file alive until it goes.
//
// Blob files are not compressed: bodies that compress are usually
// compressed by the client already (RocketMQ's producer compresses bodies
// over 4 KiB), and snappy on every other body only costs the flush CPU.
//
// Options apply to files written from now on: an existing data directory
// keeps its table files with inline values and reads them as before; new
// flushes write blob files; and an older popshim (no blob options) still
// reads a database with blob files, since BlobDB is part of RocksDB's
// format and needs no option to be read (TestBlobFilesMigration).
func messagesOptions(base *grocksdb.Options, minBlob int, memtable int64) (*grocksdb.Options, error) {
	o, err := grocksdb.GetOptionsFromString(base, "")
	if err != nil {
		return nil, err
	}
	if minBlob == 0 {
		minBlob = DefaultBlobMinBytes
	}
	if minBlob > 0 {
		o.EnableBlobFiles(true)
		o.SetMinBlobSize(uint64(minBlob))
		o.SetBlobFileSize(blobFileBytes)
		o.SetBlobCompressionType(grocksdb.NoCompression)
		o.EnableBlobGC(false)
	}
	if memtable <= 0 {
		memtable = DefaultMessagesMemtableBytes
	}
	o.SetWriteBufferSize(uint64(memtable))
	o.SetLevel0FileNumCompactionTrigger(messagesL0Trigger)
	o.SetLevel0SlowdownWritesTrigger(messagesL0Slowdown)
	o.SetLevel0StopWritesTrigger(messagesL0Stop)
	return o, nil
}

// memtableDiskShare: the messages memtable is at most this fraction of the
// data filesystem (but at least minFittedMemtable). A flush writes a whole
// memtable at once and RocksDB preallocates each WAL to 1.1 × it, so on a
// filesystem of a few hundred MiB a 128 MiB memtable moved usage by a
// fifth in one step, past the disk guard and the forced clean-up
// (found on a 600 MB filesystem: every flush failed for lack of space).
const (
	memtableDiskShare = 32
	minFittedMemtable = 8 << 20
)

// fitMemtable returns memtable (0: DefaultMessagesMemtableBytes), lowered
// to 1/memtableDiskShare of the data filesystem's size when that is
// smaller, never below minFittedMemtable; logged when lowered.
func (s *Store) fitMemtable(memtable int64) int64 {
	if memtable <= 0 {
		memtable = DefaultMessagesMemtableBytes
	}
	size, ok := filesystemBytes(s.dir)
	if !ok {
		return memtable
	}
	fit := max(size/memtableDiskShare, minFittedMemtable)
	if fit >= memtable {
		return memtable
	}
	s.log.Info().Int64("memtableBytes", fit).Int64("wanted", memtable).Int64("filesystemBytes", size).
		Msg("messages memtable lowered to fit a small data filesystem")
	return fit
}

// filesystemBytes is the size of dir's filesystem, bytes; ok=false when
// statfs fails.
func filesystemBytes(dir string) (int64, bool) {
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		return 0, false
	}
	return int64(fs.Blocks) * fs.Bsize, true
}

// maxTotalWAL bounds the WAL files' total size (max_total_wal_size): past
// it RocksDB flushes the families whose data keeps the oldest WAL alive
// (meta and offsets are rarely written). walDiskShare and minFittedWAL
// lower it on a small filesystem: RocksDB preallocates each new WAL to
// 1.1 × the largest family's write buffer (72 MiB with the default
// families' 64 MiB), capped by this bound, and a killed process leaves
// that allocated. On a 400 MB filesystem an empty broker read as 22 %
// full, 170 MB of 336 MB used were WAL files, and the forced clean-up
// deleted every stored message trying to make room the WAL held.
const (
	maxTotalWAL  = 512 << 20
	walDiskShare = 16
	minFittedWAL = 2 << 20
)

// fitWAL sets max_total_wal_size: maxTotalWAL, or 1/walDiskShare of the
// data filesystem when that is smaller (never below minFittedWAL, which
// on a filesystem of a few MiB means a flush every couple of MiB
// written); logged when lowered.
func (s *Store) fitWAL() {
	bound := int64(maxTotalWAL)
	if size, ok := filesystemBytes(s.dir); ok {
		if fit := max(size/walDiskShare, minFittedWAL); fit < bound {
			bound = fit
			s.log.Info().Int64("maxTotalWalBytes", bound).Int64("filesystemBytes", size).
				Msg("WAL bound lowered to fit a small data filesystem")
		}
	}
	s.opts.SetMaxTotalWalSize(uint64(bound))
}

// familyOptions builds the per-family options from s.opts: messages
// (blob files from minBlob bytes, Options.BlobMinBytes), pop and offsets
// (popFamilyOptions), index (indexFamilyOptions). On error the options
// built so far stay set for destroyOptions.
func (s *Store) familyOptions(minBlob int, memtable int64) error {
	var err error
	if s.msgs, err = messagesOptions(s.opts, minBlob, memtable); err != nil {
		return fmt.Errorf("popstore: rocksdb options: %w", err)
	}
	if s.hinted, err = grocksdb.GetOptionsFromString(s.opts, popFamilyOptions); err != nil {
		return fmt.Errorf("popstore: rocksdb options: %w", err)
	}
	if s.index, err = grocksdb.GetOptionsFromString(s.opts, indexFamilyOptions); err != nil {
		return fmt.Errorf("popstore: rocksdb options: %w", err)
	}
	return nil
}

// destroyOptions frees every RocksDB options object of the store (those
// not built yet are nil).
func (s *Store) destroyOptions() {
	if s.wo != nil {
		s.wo.Destroy()
		s.wo = nil
	}
	if s.ro != nil {
		s.ro.Destroy()
		s.ro = nil
	}
	for _, o := range []**grocksdb.Options{&s.msgs, &s.hinted, &s.index, &s.opts} {
		if *o != nil {
			(*o).Destroy()
			*o = nil
		}
	}
}
