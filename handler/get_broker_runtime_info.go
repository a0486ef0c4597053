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
// producerChannels, consumerChannels. Counters a Java broker keeps but
// popshim does not (msgPutTotal*, msgGetTotal*, tps figures) are left out
// rather than reported as 0.
//
// Response codes: SUCCESS (0).

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

func (b *Broker) handleGetBrokerRuntimeInfo(c remoting.Conn, req *codec.Command) {
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
	if capacity := diskCapacity(b.Cfg.DataDir); capacity != "" {
		table["commitLogDirCapacity"] = capacity
	}
	resp := codec.NewResponse(req, codec.Success, "")
	resp.Body = codec.EncodeKVTable(table)
	reply.Respond(c, req, resp)
}
