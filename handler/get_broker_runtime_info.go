package handler

// GET_BROKER_RUNTIME_INFO (28).
//
// Header: none.
//
// Behaviour: answers a KVTable {"table":{...}} of string values, the shape
// admin tools and the dashboard display (AdminBrokerProcessor
// prepareRuntimeInfo). Keys a Java broker also writes: brokerVersionDesc
// ("V5_3_3"), brokerVersion ("479"), brokerActive ("true"), bootTimestamp
// (ms), runtime ("[ d days, h hours, m minutes, s seconds ]"),
// commitLogDirCapacity ("Total : x GiB, Free : y GiB.", the data directory's
// file system). popshim's own keys: popshimWriterMode (group|sync),
// popshimWriteBatches, popshimFsyncs, popshimMutations, popshimFailedMutations
// (writer counters since start), topicNum, consumerGroupNum,
// producerChannels, consumerChannels.
//
// The figures mqadmin clusterList and brokerStatus read
// (ClusterListSubCommand, DefaultMessageStore.getRuntimeInfo), always
// present: putTps and getTransferredTps ("a b c" msgs/s over 10 s, 60 s,
// 600 s, see runtimeStats), msgPutTotal{YesterdayMorning,TodayMorning,
// TodayNow} and msgGetTotal{...} (messages stored by SEND / returned by POP
// and PULL), commitLogDiskRatio (used ratio of the data directory's file
// system, popstore.Store.DiskUsage; "0.0" when it cannot be read),
// earliestMessageTimeStamp (STORETIMESTAMP of the oldest message stored,
// popstore.Store.EarliestMessageTime, "-1" when there is none, as Java; the
// request therefore runs on the reader pool), commitLogMinOffset and
// commitLogMaxOffset (popstore.Store.CommitLogExtent, "0" when it
// cannot be read), and constant "0" for what
// popshim has no equivalent of:
// the send/pull/ack/query thread-pool queue sizes and head wait times
// (requests are not queued in thread pools; the writer's lane depths are
// on /metrics), pageCacheLockTimeMills, dispatchBehindBytes, and the timer
// wheel's timerReadBehind,
// timerOffsetBehind, timerCongestNum ("0") and timerEnqueueTps,
// timerDequeueTps ("0.0").
//
// Response codes: SUCCESS (0); SYSTEM_BUSY (2) when the reader queue is
// full.

import (
	"fmt"
	"strconv"
	"syscall"
	"time"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

// processStart is when this process loaded the handler package (the
// bootTimestamp of runtime info).
var processStart = time.Now()

// brokerVersionDesc is the MQVersion name of codec.CurrentVersion.
const brokerVersionDesc = "V5_3_3"

func formatRuntime(d time.Duration) string {
	s := int64(d / time.Second)
	return fmt.Sprintf("[ %d days, %d hours, %d minutes, %d seconds ]", s/86400, s%86400/3600, s%3600/60, s%60)
}

// diskCapacity describes the file system holding dir as the Java broker's
// commitLogDirCapacity does; "" when it cannot be read.
func diskCapacity(dir string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return ""
	}
	const gib = 1 << 30
	total := float64(st.Blocks) * float64(st.Bsize) / gib
	free := float64(st.Bavail) * float64(st.Bsize) / gib
	return fmt.Sprintf("Total : %.2f GiB, Free : %.2f GiB.", total, free)
}

// zeroRuntimeKeys are the runtime-info keys popshim has no equivalent of,
// answered "0" so the tools parse and print numbers, not null.
var zeroRuntimeKeys = []string{
	"sendThreadPoolQueueSize", "pullThreadPoolQueueSize", "ackThreadPoolQueueSize",
	"queryThreadPoolQueueSize", "litePullThreadPoolQueueSize",
	"sendThreadPoolQueueHeadWaitTimeMills", "pullThreadPoolQueueHeadWaitTimeMills",
	"ackThreadPoolQueueHeadWaitTimeMills", "queryThreadPoolQueueHeadWaitTimeMills",
	"litePullThreadPoolQueueHeadWaitTimeMills", "pageCacheLockTimeMills", "dispatchBehindBytes",
	"timerReadBehind", "timerOffsetBehind", "timerCongestNum",
}

func (b *Broker) handleGetBrokerRuntimeInfo(c remoting.Conn, req *codec.Command) {
	if !b.SubmitRead(func() { b.answerBrokerRuntimeInfo(c, req) }) {
		reply.Code(c, req, codec.SystemBusy, reply.BusyRemark)
	}
}

// answerBrokerRuntimeInfo builds and sends the KVTable. Reader goroutine.
func (b *Broker) answerBrokerRuntimeInfo(c remoting.Conn, req *codec.Command) {
	st := b.Writer.Stats()
	producers, consumers := b.Clients.Counts()
	table := map[string]string{
		"brokerVersionDesc":      brokerVersionDesc,
		"brokerVersion":          strconv.Itoa(int(codec.CurrentVersion)),
		"brokerActive":           "true",
		"bootTimestamp":          strconv.FormatInt(processStart.UnixMilli(), 10),
		"runtime":                formatRuntime(time.Since(processStart)),
		"popshimWriterMode":      string(b.Writer.Mode()),
		"popshimWriteBatches":    strconv.FormatUint(st.Batches, 10),
		"popshimFsyncs":          strconv.FormatUint(st.Fsyncs, 10),
		"popshimMutations":       strconv.FormatUint(st.Mutations, 10),
		"popshimFailedMutations": strconv.FormatUint(st.Failed, 10),
		"topicNum":               strconv.Itoa(len(b.Topics.All())),
		"consumerGroupNum":       strconv.Itoa(len(b.Clients.ConsumerGroups())),
		"producerChannels":       strconv.Itoa(producers),
		"consumerChannels":       strconv.Itoa(consumers),
	}
	now := time.Now()
	f := b.rstats.observe(now, processStart, b.Metrics.PutNums.Load(), b.Metrics.GetNums.Load())
	u64 := func(v uint64) string { return strconv.FormatUint(v, 10) }
	table["putTps"] = f.putTps
	table["getTransferredTps"] = f.getTps
	table["msgPutTotalYesterdayMorning"] = u64(f.putYesterday)
	table["msgPutTotalTodayMorning"] = u64(f.putToday)
	table["msgPutTotalTodayNow"] = u64(f.putNow)
	table["msgGetTotalYesterdayMorning"] = u64(f.getYesterday)
	table["msgGetTotalTodayMorning"] = u64(f.getToday)
	table["msgGetTotalTodayNow"] = u64(f.getNow)
	table["commitLogDiskRatio"] = "0.0"
	if ratio, _, err := b.Store.DiskUsage(); err == nil {
		table["commitLogDiskRatio"] = strconv.FormatFloat(ratio, 'f', -1, 64)
	}
	table["commitLogMinOffset"], table["commitLogMaxOffset"] = "0", "0"
	if lo, hi, err := b.Store.CommitLogExtent(); err == nil {
		table["commitLogMinOffset"] = strconv.FormatInt(lo, 10)
		table["commitLogMaxOffset"] = strconv.FormatInt(hi, 10)
	}
	table["earliestMessageTimeStamp"] = "-1"
	if ts, err := b.Store.EarliestMessageTime(); err == nil {
		table["earliestMessageTimeStamp"] = strconv.FormatInt(ts, 10)
	}
	for _, k := range zeroRuntimeKeys {
		table[k] = "0"
	}
	table["timerEnqueueTps"] = "0.0"
	table["timerDequeueTps"] = "0.0"
	if capacity := diskCapacity(b.Cfg.DataDir); capacity != "" {
		table["commitLogDirCapacity"] = capacity
	}
	resp := codec.NewResponse(req, codec.Success, "")
	resp.Body = codec.EncodeKVTable(table)
	reply.Respond(c, req, resp)
}
