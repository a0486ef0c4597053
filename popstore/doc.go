// Package popstore owns popshim's RocksDB database: the messages, pop
// (checkpoint), offsets, meta and index column families, their key layouts, and the
// read paths used by the handlers. It never answers the network.
//
// # Column families and keys (all integers big-endian)
//
//	messages  topic 0x00 queueId(u32) queueOffset(u64)   → stored-message record, or a
//	                                                        commit-log reference
//	                                                        physicalOffset(u64) size(u32)
//	          0x00 'P' physicalOffset(u64)                → message key (index): every
//	                                                        inline record and the first
//	                                                        record of each commit-log batch;
//	                                                        timer key of a pending timer
//	                                                        entry; message key + delivered
//	                                                        physicalOffset(u64) of a
//	                                                        delivered one (timers.go)
//	          0x00 'T' dueMillis(u64) physicalOffset(u64) → timer entry: a record
//	                                                        not yet in its queue (timers.go)
//	          0x00 'H' physicalOffset(u64)                → half message: header + record
//	                                                        (transactions, halves.go), waiting
//	                                                        or discarded (kept for a late decision)
//	          0x00 'h' dueMillis(u64) physicalOffset(u64) → empty: check-back index of halves
//	                                                        (a discarded one's: its expiry)
//	          0x00 'D' slotMillis(u64) deleteKey          → timer deletion marker
//	                                                        (TIMER_DEL_UNIQKEY, timer_deletes.go)
//	pop       visibleAt(i64) group '@' topic '@' queueId(u32) '@' queueOffset(u64)
//	                                                      → checkpoint value
//	offsets   group 0x00 topic 0x00 queueId(u32)          → consume offset (i64)
//	meta      "t/" topic                                  → TopicMeta JSON
//	          "g/" group                                  → GroupMeta as SubscriptionGroupConfig JSON
//	          "q/" topic 0x00 queueId(u32)                → minOffset(i64) maxOffset(i64)
//	          "s/phys"                                    → next physical offset (i64)
//	          "s/timers"                                  → number of timer entries (i64)
//	          "s/halfseq", "s/halves"                     → next tranStateTableOffset, number
//	                                                        of waiting half messages (i64 each)
//	          "s/groups"                                  → group table version: counter(i64) timestamp(i64)
//	          "o/" group 0x00 topic 0x00 queueId(u32)     → orderly-POP lease (OrderState, order.go)
//	          "x/" name                                   → free-form (Txn.PutMetaValue)
//	index     minute(u32) topic 0x00 kind key 0x00 storeTimestamp(u64) physicalOffset(u64)
//	                                                      → empty: key index of KEYS and
//	                                                        UNIQ_KEY (kind 'K') and TAGS
//	                                                        (kind 'T'); vector memtable (index.go)
//
// # The commit log
//
// A batch that appends at least Options.CommitLogBatchMinBytes (32 KiB) of
// records, or Options.CommitLogBatchMinRecords (64) records, writes them once, at their physical offsets, into segment files
// under Dir/commitlog (sparse, 1 GiB each), makes them durable with
// fdatasync and only then performs the synced RocksDB write, whose values
// are 12-byte references; smaller batches keep their records inline, in the
// one WAL fsync (commitlog.go). Readers resolve references from read-only
// mappings; retention removes whole segments below the oldest message
// kept. A database written without the commit log opens with it, and one
// written with it reads back with it turned off (the segments are opened
// either way); a popshim older than the commit log (before 2026-12-05)
// cannot read the references. A lookup by physical offset
// (VIEW_MESSAGE_BY_ID, the key index) reads the other records of a
// commit-log batch from the commit log itself and checks that their
// message key still references them (index_query.go commitLogRecord); a
// popshim built before that layout (2026-12-05) finds only the first and
// answers the others with not found.
//
// Inline values of the messages family of at least Options.BlobMinBytes
// (512) live in RocksDB blob files, the table files keeping the key and a
// reference, so compactions rewrite keys and not bodies (options.go).
//
// The package also owns how the process uses librocksdb: glibc's mmap
// threshold (malloc_linux.go), the messages memtable size
// (Options.MessagesMemtableBytes) and, on linux/amd64, the CRC32C RocksDB
// computes over every WAL record, blob record and table block: popstore
// defines rocksdb::crc32c::Extend with the CPU's CRC32 instruction, which
// takes the place of Debian's software loop in the whole process
// (crc32c_linux_amd64.go). It must not change what the library writes:
// the checksums are the same values.
//
// A message value is RocketMQ's stored-message record (CommitLog layout), so
// a POP or PULL response body is the concatenation of values. Its
// QUEUEOFFSET (byte 20) and PHYSICALOFFSET (byte 28) are filled in by
// Txn.AppendMessage. The physical offset is a per-broker byte position (sum of
// the lengths of all records appended before), monotonic across restarts
// because "s/phys" is written in the same WriteBatch as the appends.
//
// The checkpoint key is the layout of RocketMQ's POP KV store
// (PopConsumerRecord.getKeyBytes): sorted by visibility instant, so revive is a range
// scan (ScanCheckpoints). The value is compact binary (Checkpoint.appendValue).
//
// # Writes
//
// Every mutation goes through a Txn, built on one goroutine (the batch
// writer) and committed with one synced db.Write (WAL on, sync=true),
// preceded by the commit log's pwrite and fdatasync when the batch's
// records go there. A Txn
// reads through its own pending writes (house style 11). After the write
// returns, Commit publishes the in-memory effects: queue extents (MaxOffset,
// MinOffset), consumer offsets, topics and groups, and tells the
// AppendListener. Readers therefore only ever see durable state.
//
// # Reads
//
// MaxOffset, MinOffset, ConsumerOffset, OrderState, Topic(s), Group(s), GroupNames,
// GroupTable and GroupsDataVersion are in-memory and
// safe on the gnet event loop. ReadMessages, ReadMessage,
// MessageByPhysicalOffset, SearchOffsetByTimestamp, ScanCheckpoints,
// Checkpoint and MetaValue read RocksDB and must run on a reader goroutine.
// ReadMessages (and ReadMessagesInto, which reuses the caller's
// ReadBuffer) reads a queue range in one cgo call (scan.go): the seek, the
// iteration and the copies run in C, as Txn.Commit's write is one call.
//
// # Recovery and retention
//
// Open loads the queue extents, consumer offsets and metadata from the meta
// and offsets families; because they are written in the same WriteBatch as
// the data they describe, they agree after any crash. Commit-log records a
// crash left unreferenced (written, their RocksDB write not) are past
// "s/phys": Open removes segments starting there, later batches overwrite
// the rest. Retention (PlanRetention
// + Txn.ApplyRetention, driven by package batch) removes messages older than
// Options.RetentionMillis (default 72 h, RocketMQ's fileReservedTime) with
// range deletes, per queue, by STORETIMESTAMP, and with them the key-index
// minutes before the cutoff (one range delete: the minute leads the key);
// CompactTrimmed then removes the commit-log segments wholly below the
// oldest message kept.
//
// # Key index
//
// Txn.AppendMessage writes, in the message's own WriteBatch, one key-index
// entry per UNIQ_KEY, non-empty KEYS element and TAGS value of the record
// (RocketMQ's IndexService; Options.DisableMessageIndex turns it off).
// QueryMessagesByKey walks the non-empty minutes of a time range newest first
// and returns the records whose physical-offset entry still names the same
// message, so entries of deleted topics are skipped until retention drops
// them.
//
// # C memory
//
// RocksDB's memory is C heap. Open fixes glibc's mmap threshold at 1 MiB
// once per process (malloc_linux.go), so freed memtable blocks and large
// WriteBatches go back to the kernel instead of staying in malloc's arenas.
package popstore
