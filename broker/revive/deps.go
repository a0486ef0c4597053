package revive

import (
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/popstore"
)

// Settings are the knobs of the revive loop, read from the configuration
// once by the broker. Defaults follow RocketMQ's BrokerConfig.
type Settings struct {
	// Interval is the pause between passes that found less than a full
	// batch (RocketMQ: 500 ms).
	Interval time.Duration
	// Batch is the most checkpoints one pass handles
	// (popReviveMaxReturnSizePerRead, 16384).
	Batch int
	// MaxAttempts is how many failed revive attempts a checkpoint gets
	// before it is dropped with an error log (popReviveMaxAttemptTimes, 16).
	MaxAttempts int32
	// RetryTopicV2 names new pop retry topics %RETRY%group+topic
	// (enableRetryTopicV2); false uses %RETRY%group_topic.
	RetryTopicV2 bool
}

// Topics is what revive needs of the topic table (broker/meta's
// TopicTable implements it): look-ups, and creation of the retry or DLQ
// topic a copy goes to. Called on the revive goroutine; the methods must
// not block on storage.
type Topics interface {
	// Get returns the configuration of topic and whether it exists.
	Get(topic string) (popstore.TopicMeta, bool)
	// GetOrCreate returns topic, auto-creating a %RETRY% topic; its
	// persistence is queued on the writer.
	GetOrCreate(topic string) (popstore.TopicMeta, error)
	// EnsureDLQTopic makes %DLQ%<group> exist; persistence queued as above.
	EnsureDLQTopic(group string) (popstore.TopicMeta, error)
}

// Metrics are the Prometheus series revive updates; the broker owns and
// registers them (names as in its POP metrics: popshim_revive_* and
// RocketMQ's rocketmq_pop_revive_retry_messages_total and
// rocketmq_send_to_dlq_messages_total).
type Metrics struct {
	Passes    prometheus.Counter     // popshim_revive_passes_total
	LagMillis prometheus.Gauge       // popshim_revive_lag_milliseconds
	Dropped   prometheus.Counter     // popshim_revive_dropped_total
	Retry     *prometheus.CounterVec // {consumer_group,topic,put_status}
	SendToDLQ *prometheus.CounterVec // {topic,consumer_group,is_system}
}

// Deps are the broker pieces a Reviver works with. All fields are
// required.
type Deps struct {
	Log    zerolog.Logger  // pass failures, drops, backoffs
	Store  *popstore.Store // scans checkpoints and reads messages (revive goroutine)
	Writer *batch.Writer   // one background-lane op per chunk
	Topics Topics          // retry and DLQ topics are created through it
	// Now is the broker clock, Unix ms: the scan bound and the store time
	// of retry copies.
	Now func() int64
	// StoreHost is the address written as born and store host of retry
	// copies (the advertised broker address).
	StoreHost func() netip.AddrPort
	// RetryMax is the retry limit of a consumer group (its stored
	// retryMaxTimes, else --max-reconsume-times), used when a message has
	// no MAX_RECONSUME_TIMES property. Any goroutine.
	RetryMax func(group string) int32
	Metrics  Metrics // updated by each pass
}
