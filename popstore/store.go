package popstore

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linxGnu/grocksdb"
	"github.com/rs/zerolog"
)

// DefaultRetentionMillis is RocketMQ's fileReservedTime default: 72 hours.
const DefaultRetentionMillis = 72 * 60 * 60 * 1000

// WriteHook wraps every synced write of a WriteBatch. seq numbers the writes
// of this Store from 1. The hook must call write exactly once to perform the
// real db.Write(sync=true), or not at all to refuse the write (then return an
// error wrapping ErrWriteRejected). It runs on the goroutine that commits
// (the batch writer, or a sync-mode worker). Used for fault injection in
// tests and for the hidden --test-slow-store delay (see DelayHook); nil in
// production.
type WriteHook func(seq uint64, write func() error) error

// DelayHook returns a WriteHook that sleeps d before every write, to make the
// store artificially slow in tests.
func DelayHook(d time.Duration) WriteHook {
	return func(_ uint64, write func() error) error {
		time.Sleep(d)
		return write()
	}
}

// AppendListener is told, after a commit made new messages durable, the new
// MaxOffset (next queueOffset to assign) of each queue the commit appended
// to. It runs on the committing goroutine and must not block (used to wake
// parked long polls).
type AppendListener func(topic string, queueId int32, maxOffset int64)

// Options configures Open.
type Options struct {
	// Dir is the RocksDB directory; created when missing.
	Dir string
	// RetentionMillis is how long messages are kept, ms, by their
	// STORETIMESTAMP. 0 means DefaultRetentionMillis (72 h); negative
	// disables retention.
	RetentionMillis int64
	// WriteHook wraps every write (fault injection, slow store). Nil: plain
	// synced write.
	WriteHook WriteHook
	// NowMillis is the clock used for retention, Unix ms. Nil: time.Now.
	NowMillis func() int64
	// Logger receives open/close/recovery lines. Nil: zerolog.Nop().
	Logger *zerolog.Logger
	// Statistics turns on RocksDB's statistics (a few % CPU), so WALSyncs
	// reports the real number of WAL fsyncs. Benchmarks use it.
	Statistics bool
	// InfoLogDir is where RocksDB writes its own LOG file
	// (--rocksdb-log-dir). "" (default): the LOG in Dir holds only the
	// header written at open (options, version), nothing at run time. Debian's
	// librocksdb is built with assertions on, and its LOG writer aborts the
	// process on the second line it tries to write after one failed with
	// ENOSPC (WritableFileWriter::AssertFalseAndGetStatusForPrevError), so
	// a LOG on the data filesystem turns a full disk into SIGABRT. Give a
	// directory on another filesystem to keep the LOG.
	InfoLogDir string
	// DisableMessageIndex turns the key index off (RocketMQ's
	// messageIndexEnable=false, --message-index-enable=false): AppendMessage
	// writes no key-index entries and QueryMessagesByKey finds only what
	// was indexed before.
	DisableMessageIndex bool
	// BlobMinBytes is the size from which a value of the messages family
	// (a stored record, a half message) goes to a blob file instead of the
	// table files (RocksDB's integrated BlobDB, min_blob_size; see
	// options.go). 0: DefaultBlobMinBytes; negative: no blob files, every
	// value inline, as before blob files were used (2026-12-04). Either way
	// a database written with the other setting reads back unchanged.
	BlobMinBytes int
	// MessagesMemtableBytes is the messages family's write buffer
	// (RocksDB write_buffer_size), bytes: stored records, bodies included,
	// wait in memtables of this size until a flush moves the bodies to
	// blob files, and under sustained produce two of them are alive (one
	// filling, one flushing). 0: DefaultMessagesMemtableBytes (128 MiB);
	// conf.Config.MessagesMemtableBytes lowers it with --queue-max-bytes
	// so that a small memory budget is not spent here.
	MessagesMemtableBytes int64
	// CommitLogMinBytes is the size from which a stored-message record
	// appended to a queue is written once to the commit log (segment files
	// in Dir/commitlog, commitlog.go) and RocksDB keeps a 12-byte reference
	// instead of the record. 0: DefaultCommitLogMinBytes; negative: no
	// commit log, every record in RocksDB (before 2026-12-05). Records
	// written with either setting read back with the other.
	CommitLogMinBytes int
	// CommitLogSegmentBytes is the capacity of a new commit-log segment,
	// bytes (sparse: only written bytes take disk). 0:
	// DefaultCommitLogSegmentBytes (1 GiB). Retention removes whole
	// segments.
	CommitLogSegmentBytes int64
	// CommitLogBatchMinBytes (bytes) and CommitLogBatchMinRecords: a batch
	// with fewer commit-log record bytes and fewer records keeps them in
	// RocksDB as inline values, in the one WAL fsync, since the commit log's
	// own fdatasync is a second ext4 journal commit (1 KiB alone 0.22
	// against 0.14 ms, BenchmarkCommitOneMessage). 0: the Default
	// constants; negative bytes: every batch uses the commit log; negative
	// records: bytes decide alone.
	CommitLogBatchMinBytes   int
	CommitLogBatchMinRecords int
}

// queueKey identifies one message queue.
type queueKey struct {
	topic   string
	queueId int32
}

// queueState is the durable extent of one queue: messages exist for
// queueOffsets in [min, max). Written by the committing goroutine only,
// read anywhere.
type queueState struct {
	min atomic.Int64
	max atomic.Int64
	// recordAvg is a running average of the sizes of the records
	// readRange copied from the queue, bytes (0 before the first): it
	// sizes the next read's buffer. Per queue: one store-wide figure let a
	// topic of 4 MiB messages size every read of small ones at the budget.
	recordAvg atomic.Int64
}

// offsetID identifies one consumer offset.
type offsetID struct {
	group, topic string
	queueId      int32
}

// Store is popshim's RocksDB database. Reads may be called from any goroutine
// except where noted; writes only go through a Txn (see Begin), normally on
// the batch writer goroutine. Close after the writer has closed.
type Store struct {
	// db is nil while the store is down: closed by Reopen and not opened
	// again yet; reads answer ErrUnavailable. Set and cleared with closeMu
	// held exclusively; readers hold it shared (readGuard).
	db     *grocksdb.DB
	cfs    [numCFs]*grocksdb.ColumnFamilyHandle // default, messages, pop, offsets, meta, index
	cfIDs  [numCFs]uint32                       // their RocksDB ids
	wo     *grocksdb.WriteOptions
	ro     *grocksdb.ReadOptions
	opts   *grocksdb.Options // DB-wide and default/meta families
	msgs   *grocksdb.Options // messages family (blob files, options.go)
	hinted *grocksdb.Options // pop and offsets families (memtable insert hint)
	index  *grocksdb.Options // index family (vector memtable, indexFamilyOptions)
	log    zerolog.Logger
	hook   WriteHook
	now    func() int64
	keep   int64 // retention, ms; <0 disabled
	stats  bool
	wseq   atomic.Uint64
	// noIndex: Options.DisableMessageIndex.
	noIndex bool
	// lastIndexed is the newest key-index entry committed since Open (nil
	// before one); QueryMessagesByKey reports it.
	lastIndexed atomic.Pointer[indexMark]
	onApp       atomic.Pointer[AppendListener]

	// serialMu orders the Txns that touch queue offsets, the physical
	// offset or metadata: held from the first such call until Commit or
	// Discard. Uncontended with one group-commit writer; in sync mode it
	// keeps queueOffsets durable in assignment order.
	serialMu sync.Mutex
	nextPhys int64 // REQUIRES: serialMu (committed value)
	// committedPhys mirrors nextPhys for lock-free readers.
	committedPhys atomic.Int64
	// timers is the number of durable timer entries (meta "s/timers");
	// written by publish under serialMu.
	timers atomic.Int64
	// half holds the half-message counters (halves.go).
	half halfState

	queues sync.Map // queueKey -> *queueState

	// inflight counts the durable checkpoints per (group, topic)
	// (inflight.go): seeded by a scan at open, kept by publish.
	inflight inflightCounts

	mu      sync.RWMutex // protects the maps below (in-memory copies)
	offsets map[offsetID]int64
	orders  map[offsetID]OrderState // orderly-POP leases (order.go)
	topics  map[string]TopicMeta
	groups  map[string]GroupMeta
	// groupsVer is the committed group table version; written by publish
	// under both serialMu and mu, so a Txn holding serialMu may read it.
	groupsVer groupsVersion

	closeMu sync.RWMutex // held shared by reads, exclusively by Close and Reopen
	closed  bool
	// replayed memoizes replayBytes for the WAL it measured (reopen_room.go).
	// REQUIRES: closeMu held exclusively, or the Store not shared (Open).
	replayed replayMemo
	// writeFailed is set by a failed synced write: RocksDB's WAL writer has
	// then seen an error, and any later flush of it (FlushWAL, SyncWAL)
	// aborts the process (see Options.InfoLogDir); Close skips FlushWAL.
	writeFailed atomic.Bool
	dir         string
	// clog is the commit log; records of at least clogMin bytes go there
	// (math.MaxInt: none, Options.CommitLogMinBytes < 0).
	clog    *commitLog
	clogMin int
	// clogBatchMin, clogBatchMinRecs: Options.CommitLogBatchMinBytes (0
	// when negative) and CommitLogBatchMinRecords (math.MaxInt when negative).
	clogBatchMin, clogBatchMinRecs int
	// clogEnds is commitLog.write's scratch for the segment ends a batch
	// records. REQUIRES: serialMu held.
	clogEnds []segEnd
}

func (s *Store) cfMessages() *grocksdb.ColumnFamilyHandle { return s.cfs[1] }
func (s *Store) cfPop() *grocksdb.ColumnFamilyHandle      { return s.cfs[2] }
func (s *Store) cfOffsets() *grocksdb.ColumnFamilyHandle  { return s.cfs[3] }
func (s *Store) cfMeta() *grocksdb.ColumnFamilyHandle     { return s.cfs[4] }
func (s *Store) cfIndex() *grocksdb.ColumnFamilyHandle    { return s.cfs[5] }

// numCFs is the number of column families, default included.
const numCFs = 6

// Open opens (creating when missing) the database in opts.Dir with the
// column families messages, pop, offsets and meta, and loads into memory
// each queue's offsets extent, the consumer offsets, topics and groups.
// Errors: ErrNoRoom, wrapped with the numbers, when the filesystem cannot
// take the flush of the WAL's replay, ErrLocked when another process has
// the directory open (readyToOpen; the data directory is left as it was);
// the RocksDB open error or a corrupt meta value, wrapped.
func Open(opts Options) (*Store, error) {
	if opts.Dir == "" {
		return nil, fmt.Errorf("popstore: Options.Dir is empty")
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("popstore: %w", err)
	}
	s := &Store{
		hook:    opts.WriteHook,
		dir:     opts.Dir,
		now:     opts.NowMillis,
		keep:    opts.RetentionMillis,
		noIndex: opts.DisableMessageIndex,
		offsets: make(map[offsetID]int64), orders: make(map[offsetID]OrderState),
		topics: make(map[string]TopicMeta),
		groups: make(map[string]GroupMeta),
	}
	if s.now == nil {
		s.now = func() int64 { return time.Now().UnixMilli() }
	}
	if s.keep == 0 {
		s.keep = DefaultRetentionMillis
	}
	if opts.Logger != nil {
		s.log = opts.Logger.With().Str("component", "popstore").Logger()
	} else {
		s.log = zerolog.Nop()
	}
	tuneMalloc()
	s.opts = grocksdb.NewDefaultOptions()
	s.opts.SetCreateIfMissing(true)
	s.opts.SetCreateIfMissingColumnFamilies(true)
	// Point-in-time recovery stops at the first damaged WAL record, so
	// recovery never skips a record and keeps a later one. WAL file
	// recycling (recycle_log_file_num), which would spare fdatasync the
	// inode write of every append, stays off: RocksDB 7.8.3 allows it only
	// with skip-any recovery, and with it this store crashed (SIGSEGV in a
	// flush thread, DBImpl::MarkLogsSynced) in 5 of 8 runs of the ACK
	// bench (docs/PERFORMANCE-HISTORY.md, 2026-12-07).
	s.opts.SetWALRecoveryMode(grocksdb.PointInTimeRecovery)
	// Bound the WAL kept alive by rarely written families (meta, offsets):
	// past this size RocksDB flushes them so old WAL files can go.
	s.fitWAL()
	// Flushes and compactions write their files with a sync_file_range
	// every MiB instead of one large writeback at the end: the WAL fsync of
	// every batch shares the disk (and ext4's journal) with them, and a
	// large burst of dirty SST pages makes that fsync wait. On the
	// ACK/CHANGE bench the effect is small next to this machine's noise:
	// in five interleaved pairs the mean synced write was ~5–10 % shorter
	// and ACK/s within ±10 % (median a few % higher).
	s.opts.SetBytesPerSync(1 << 20)
	setBackgroundThreads(s.opts)
	// Every open renames the LOG to LOG.old.<µs>, and the writer reopens
	// the store once a second while a fault lasts (reopen.go): RocksDB's
	// default of 1,000 kept files let an outage of minutes leave hundreds.
	s.opts.SetKeepLogFileNum(keptInfoLogs)
	if opts.InfoLogDir != "" {
		s.opts.SetDbLogDir(opts.InfoLogDir)
	} else {
		// HEADER_LEVEL: RocksDB drops every line but the header it writes
		// at open. The C API of 7.8 offers no null logger.
		s.opts.SetInfoLogLevel(grocksdb.InfoLogLevel(silentInfoLogLevel))
	}
	if opts.Statistics {
		s.opts.EnableStatistics()
		s.stats = true
	}
	// pop and offsets: one memtable insert hint (a remembered skiplist
	// search path) shared by every key, so consecutive inserts near each
	// other — as in a batch sorted by Txn.Commit — cost O(log distance)
	// instead of O(log memtable size). Not for messages: RocksDB 7.8 shares
	// the hint between the point and the range-deletion memtables of a
	// family, which trips an assertion once range deletes are used.
	// pop and offsets are also stored uncompressed: checkpoints live for
	// about one invisibleTime and offsets are tiny, so snappy in flushes
	// and compactions only costs the writer's CPU (about 8 % less CPU per
	// mutation at saturation without it, BenchmarkWriterPipelined).
	// The index family's vector memtable cannot take concurrent inserts;
	// popshim's writes come from one writer goroutine (group mode) or a
	// few sync-mode workers whose one-entry batches RocksDB's write-group
	// leader then inserts in turn.
	s.opts.SetAllowConcurrentMemtableWrites(false)
	if err := s.familyOptions(opts.BlobMinBytes, s.fitMemtable(opts.MessagesMemtableBytes)); err != nil {
		s.destroyOptions()
		return nil, err
	}
	s.wo = grocksdb.NewDefaultWriteOptions()
	s.wo.SetSync(true)
	s.wo.DisableWAL(false)
	s.ro = grocksdb.NewDefaultReadOptions()
	if err := s.readyToOpen(opts.InfoLogDir); err != nil {
		s.destroyOptions()
		return nil, err
	}
	if err := s.openDB(); err != nil {
		s.destroyOptions()
		return nil, err
	}
	s.groupsVer.timestampMillis = s.now() // until a stored version is loaded
	st, err := s.loadState()
	if err != nil {
		s.closeDB()
		s.destroyOptions()
		return nil, err
	}
	s.install(st)
	s.committedPhys.Store(s.nextPhys)
	if err := s.openCommitLog(opts, st.clogEnds); err != nil {
		s.closeDB()
		s.destroyOptions()
		return nil, err
	}
	crcHW, _ := CRC32CStats()
	s.log.Info().Str("dir", opts.Dir).Int("queues", s.queueCount()).Bool("crc32cHardware", crcHW).
		Int("topics", len(s.topics)).Int("groups", len(s.groups)).
		Int("consumerOffsets", len(s.offsets)).Int64("nextPhysicalOffset", s.nextPhys).
		Msg("store opened")
	return s, nil
}

func (s *Store) queueCount() int {
	n := 0
	s.queues.Range(func(_, _ any) bool { n++; return true })
	return n
}

// SetAppendListener installs fn (nil removes it). Call before the writer
// starts; safe from any goroutine.
func (s *Store) SetAppendListener(fn AppendListener) {
	if fn == nil {
		s.onApp.Store(nil)
		return
	}
	s.onApp.Store(&fn)
}

// RetentionMillis returns the configured retention, ms (negative: disabled).
func (s *Store) RetentionMillis() int64 { return s.keep }

// write performs one synced write of wb through the hook.
func (s *Store) write(wb *grocksdb.WriteBatch) error {
	do := func() error {
		// RocksDB's perf counters (default level kEnableCount) cost a
		// thread-local access per key comparison of the memtable insert. The
		// level is per OS thread; setting it right before the write reaches
		// whichever thread runs this goroutine's cgo calls.
		grocksdb.SetPerfLevel(grocksdb.KDisable)
		return s.db.Write(s.wo, wb)
	}
	seq := s.wseq.Add(1)
	var err error
	if s.hook != nil {
		err = s.hook(seq, do)
	} else {
		err = do()
	}
	if err != nil && !errors.Is(err, ErrWriteRejected) {
		s.writeFailed.Store(true)
	}
	return err
}

// NowMillis returns the store's clock (Options.NowMillis), Unix ms.
func (s *Store) NowMillis() int64 { return s.now() }
