package broker

import (
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/popshim/popshim/broker/revive"
)

// Settings are the knobs of the POP machinery and of the request handlers
// that share it (SEND's size bound, the revive loop's knobs), read from
// conf.Config once in handler.NewBroker (SettingsFromConfig) so that no
// handler or subsystem reaches into the configuration. Defaults follow RocketMQ's BrokerConfig where a
// RocketMQ name exists.
type Settings struct {
	// BrokerName is field 5 of every receipt handle (BrokerConfig.brokerName).
	BrokerName string
	// ClusterName is stamped into the CLUSTER property of sent messages.
	ClusterName string
	// RegionID and TraceOn are stamped into the MSG_REGION and TRACE_ON
	// properties of sent messages and reported in SEND results
	// (BrokerConfig.regionId, traceOn; AbstractSendMessageProcessor).
	RegionID string
	TraceOn  bool
	// StoreHost is the advertised broker address written as storeHost into
	// every stored record; with physicalOffset it forms the offsetMsgId.
	StoreHost netip.AddrPort
	// MaxParkedPolls bounds parked POP/PULL/NOTIFICATION requests
	// (--max-parked-polls); beyond it POP answers POLLING_FULL (209).
	MaxParkedPolls int
	// Readers is the number of reader goroutines (POP, PULL, NOTIFICATION,
	// CONSUMER_SEND_MSG_BACK reads).
	Readers int
	// ReaderQueue bounds requests waiting for a reader; full: SYSTEM_BUSY.
	ReaderQueue int
	// MaxScanPerQueue bounds how many stored messages one POP scans in one
	// queue while filtering by tag before it gives up for this round
	// (RocketMQ scans up to ~800 consume-queue units); progress is kept.
	MaxScanPerQueue int
	// MaxPopBytes bounds the body of one POP/PULL response, bytes (a
	// single message larger than it is still sent alone). The default
	// leaves maxReplyHeadroom below a client's 16 MiB frame limit.
	MaxPopBytes int
	// ReplyRoom, when not nil, returns how many more reply bytes the
	// remoting listener may hold for clients that have not read theirs
	// (remoting.Server.ReplyRoom): a POP or PULL reads at most that many
	// bytes of messages (at least one message while it is positive), and
	// none while it is not: it waits replyRoomRetry at a time until its
	// poll ends, then answers empty (reply_room.go). Set before traffic.
	ReplyRoom func() int64
	// MaxReconsumeTimes is the default retry limit (retryMaxTimes, 16)
	// when neither the message's MAX_RECONSUME_TIMES property nor the group
	// says otherwise; past it revive writes to %DLQ%group.
	MaxReconsumeTimes int32
	// Revive are the revive loop's knobs (interval, batch, attempts,
	// retry topic naming). The reviver keeps a pointer to them, so tests
	// may change them before traffic.
	Revive revive.Settings
	// RetryFirstEvery makes every Nth POP per (group, topic) read the retry
	// topics first (popFromRetryProbability 20% → every 5th).
	RetryFirstEvery uint64
	// MaxMessageBytes bounds a single message body on SEND (maxMessageSize,
	// 4 MiB).
	MaxMessageBytes int
	// ClientCallTimeout bounds the wait for a client's answer to a request
	// the broker forwards to it (GET_CONSUMER_RUNNING_INFO,
	// CONSUME_MESSAGE_DIRECTLY); 0 means DefaultClientCallTimeout
	// (Broker2Client.callClient, 10 s). Tests shorten it before traffic.
	ClientCallTimeout time.Duration
	// InMemoryBytes is how many bytes of commit log may follow a queue's
	// first message for it to count as in memory (hotQueue), so that a
	// new group starting from the last offset starts at 0
	// (DefaultInMemoryBytes: 40 % of physical memory).
	InMemoryBytes int64
	// Hooks are fault-injection points for tests; never nil, empty in
	// production.
	Hooks *Hooks
}

// MaxReplyHeadroom is what a POP or PULL reply may need beyond its stored
// records, bytes: the length prefixes and the JSON header (offset info of
// at most 32 messages), and POP's re-encoding of each record (POP_CK and
// 1ST_POP_TIME properties, a retry copy's original topic). RocketMQ's
// clients refuse a frame above 16 MiB, length prefix included
// (NettyDecoder, com.rocketmq.remoting.frameMaxLength).
const MaxReplyHeadroom = 256 << 10

// Hooks are test-only injection points of the POP path (nil pointers in
// production). Set them before the request they should affect is sent.
type Hooks struct {
	// BeforeSubmit runs on the reader after a POP collected its messages
	// (queue locks held, offsets read) and before it submits its
	// checkpoints and offset advance to the writer; it may block.
	BeforeSubmit atomic.Pointer[func()]
}

// DefaultSettings returns the defaults used when the configuration does
// not override a value.
func DefaultSettings() Settings {
	return Settings{
		BrokerName:        "popshim",
		ClusterName:       "DefaultCluster",
		RegionID:          "DefaultRegion",
		TraceOn:           true,
		StoreHost:         netip.MustParseAddrPort("127.0.0.1:10911"),
		MaxParkedPolls:    100000,
		Readers:           4,
		ReaderQueue:       10000,
		MaxScanPerQueue:   4096,
		MaxPopBytes:       16<<20 - MaxReplyHeadroom,
		MaxReconsumeTimes: 16,
		Revive: revive.Settings{
			Interval:     500 * time.Millisecond,
			Batch:        16384,
			MaxAttempts:  16,
			RetryTopicV2: true,
		},
		RetryFirstEvery: 5,
		MaxMessageBytes: 4 << 20,
		InMemoryBytes:   DefaultInMemoryBytes(),
		Hooks:           &Hooks{},
	}
}
