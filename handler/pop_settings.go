package handler

import (
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/popshim/popshim/handler/revive"
)

// popSettings are the knobs of the POP machinery, read from conf.Config once
// in NewBroker (settingsFromConfig) so the rest of the package never reaches
// into the configuration. Defaults follow RocketMQ's BrokerConfig where a
// RocketMQ name exists.
type popSettings struct {
	// brokerName is field 5 of every receipt handle (BrokerConfig.brokerName).
	brokerName string
	// clusterName is stamped into the CLUSTER property of sent messages.
	clusterName string
	// storeHost is the advertised broker address written as storeHost into
	// every stored record; with physicalOffset it forms the offsetMsgId.
	storeHost netip.AddrPort
	// maxParkedPolls bounds parked POP/PULL/NOTIFICATION requests
	// (--max-parked-polls); beyond it POP answers POLLING_FULL (209).
	maxParkedPolls int
	// readers is the number of reader goroutines (POP, PULL, NOTIFICATION,
	// CONSUMER_SEND_MSG_BACK reads).
	readers int
	// readerQueue bounds requests waiting for a reader; full: SYSTEM_BUSY.
	readerQueue int
	// maxScanPerQueue bounds how many stored messages one POP scans in one
	// queue while filtering by tag before it gives up for this round
	// (RocketMQ scans up to ~800 consume-queue units); progress is kept.
	maxScanPerQueue int
	// maxPopBytes bounds the body of one POP/PULL response, bytes (a
	// single message larger than it is still sent alone). The default
	// leaves maxReplyHeadroom below a client's 16 MiB frame limit.
	maxPopBytes int
	// maxReconsumeTimes is the default retry limit (retryMaxTimes, 16)
	// when neither the message's MAX_RECONSUME_TIMES property nor the group
	// says otherwise; past it revive writes to %DLQ%group.
	maxReconsumeTimes int32
	// revive are the revive loop's knobs (interval, batch, attempts,
	// retry topic naming). The reviver keeps a pointer to them, so tests
	// may change them before traffic.
	revive revive.Settings
	// retryFirstEvery makes every Nth POP per (group, topic) read the retry
	// topics first (popFromRetryProbability 20% → every 5th).
	retryFirstEvery uint64
	// maxMessageBytes bounds a single message body on SEND (maxMessageSize,
	// 4 MiB).
	maxMessageBytes int
	// hooks are fault-injection points for tests; never nil, empty in
	// production.
	hooks *popHooks
}

// maxReplyHeadroom is what a POP or PULL reply may need beyond its stored
// records, bytes: the length prefixes and the JSON header (offset info of
// at most 32 messages), and POP's re-encoding of each record (POP_CK and
// 1ST_POP_TIME properties, a retry copy's original topic). RocketMQ's
// clients refuse a frame above 16 MiB, length prefix included
// (NettyDecoder, com.rocketmq.remoting.frameMaxLength).
const maxReplyHeadroom = 256 << 10

// popHooks are test-only injection points of the POP path (nil pointers in
// production). Set them before the request they should affect is sent.
type popHooks struct {
	// beforeSubmit runs on the reader after a POP collected its messages
	// (queue locks held, offsets read) and before it submits its
	// checkpoints and offset advance to the writer; it may block.
	beforeSubmit atomic.Pointer[func()]
}

// defaultPopSettings returns the defaults used when the configuration does
// not override a value.
func defaultPopSettings() popSettings {
	return popSettings{
		brokerName:        "popshim",
		clusterName:       "DefaultCluster",
		storeHost:         netip.MustParseAddrPort("127.0.0.1:10911"),
		maxParkedPolls:    100000,
		readers:           4,
		readerQueue:       10000,
		maxScanPerQueue:   4096,
		maxPopBytes:       16<<20 - maxReplyHeadroom,
		maxReconsumeTimes: 16,
		revive: revive.Settings{
			Interval:     500 * time.Millisecond,
			Batch:        16384,
			MaxAttempts:  16,
			RetryTopicV2: true,
		},
		retryFirstEvery: 5,
		maxMessageBytes: 4 << 20,
		hooks:           &popHooks{},
	}
}
