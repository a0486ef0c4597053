package broker

import "github.com/popshim/popshim/popstore"

// DefaultInMemoryRatio is the share of physical memory, in percent, whose
// worth of most recently stored commit-log bytes counts as "in memory"
// (MessageStoreConfig.accessMessageInMemoryMaxRatio, 40).
const DefaultInMemoryRatio = 40

// DefaultInMemoryBytes is Settings.InMemoryBytes's default:
// DefaultInMemoryRatio percent of this machine's physical memory
// (StoreUtil.TOTAL_PHYSICAL_MEMORY_SIZE; physicalMemoryBytes).
func DefaultInMemoryBytes() int64 {
	return physicalMemoryBytes() / 100 * DefaultInMemoryRatio
}

// hotQueue reports whether (topic, queueID) was never trimmed, holds a
// message, and its first message (offset 0) was followed by at most
// window bytes of commit log: popshim's form of a Java broker's
// checkInMemByConsumeOffset(topic, queueId, 0, 1), which POP's initMode
// MAX and QUERY_CONSUMER_OFFSET use to start a new group at 0 instead of
// at the end. A Java 5.5 broker asks the page cache (mincore of the
// mapped commit log); 4.x asked whether the message lay within
// accessMessageInMemoryMaxRatio of physical memory behind the commit
// log's end, which is the rule here (popshim serves reads from RocksDB
// and its own commit log, so there is no page-cache question to ask).
// Until 2026-12-06 the test was the first message's age (under 10 min),
// and a group created after a producer had run for ten minutes skipped a
// backlog a Java broker delivers. Reads RocksDB: reader goroutines only.
func hotQueue(st *popstore.Store, topic string, queueID int32, window int64) bool {
	if st.MinOffset(topic, queueID) != 0 || st.MaxOffset(topic, queueID) == 0 {
		return false
	}
	rec, err := st.ReadMessage(topic, queueID, 0)
	if err != nil {
		return false
	}
	phys, ok := popstore.RecordPhysicalOffset(rec)
	return ok && st.CommitLogMaxOffset()-phys <= window
}

// fallbackMemoryBytes stands in for physical memory where it cannot be
// read: 8 GiB.
const fallbackMemoryBytes = 8 << 30
