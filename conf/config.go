// Package conf holds popshim's whole configuration: one Config struct, its
// command-line flags, POPSHIM_* environment overrides and validation.
//
// Precedence: a flag given on the command line wins, then the environment
// variable POPSHIM_<FLAG_NAME> (upper case, '-' → '_', e.g. --data-dir ↔
// POPSHIM_DATA_DIR), then the default. Defaults follow Apache RocketMQ's
// BrokerConfig / MessageStoreConfig where a RocketMQ name exists. conf reads
// no file.
package conf

import (
	"time"
)

// Config is every setting of a popshim process. Build it with Default, bind
// it with BindFlags, finish it with Load (environment, derived values,
// Validate). Read-only once Load returned; safe to share between goroutines.
type Config struct {
	// Listen is the broker's remoting listen address, host:port
	// (RocketMQ listenPort 10911). --listen, default ":10911".
	Listen string
	// NamesrvListen is where popshim answers name-server requests itself,
	// routing every topic to this broker; empty disables the embedded name
	// server. --namesrv-listen, default ":9876".
	NamesrvListen string
	// NamesrvAddr lists external RocketMQ name servers to REGISTER_BROKER
	// with, separated by ';' as in RocketMQ's namesrvAddr (',' accepted too);
	// empty means none. --namesrv-addr.
	NamesrvAddr string
	// RegisterInterval is the period of REGISTER_BROKER to NamesrvAddr
	// (registerNameServerPeriod, 30 s). --register-interval.
	RegisterInterval time.Duration
	// MetricsListen is the Prometheus /metrics address, host:port
	// (metricsPromExporterPort 5557); empty disables. --metrics-listen.
	MetricsListen string
	// GRPCListen is where popshim serves the RocketMQ 5 gRPC protocol
	// (apache.rocketmq.v2.MessagingService) to the v5 SDKs directly, with
	// no rocketmq-proxy (the proxy's grpcServerPort, 8081); empty disables
	// it. It follows the --tls-* settings of the remoting ports: disabled is
	// plaintext HTTP/2, permissive serves TLS and plaintext on this port
	// told apart by the first byte, enforcing TLS only. --grpc-listen,
	// default ":8081".
	GRPCListen string
	// GRPCMaxRecvBytes is the largest request the gRPC port reads, bytes;
	// a larger one fails with the gRPC status RESOURCE_EXHAUSTED. 0
	// (default): MaxMessageSize + 1 MiB (EffectiveGRPCMaxRecvBytes).
	// --grpc-max-recv-bytes.
	GRPCMaxRecvBytes int
	// GRPCMaxConcurrentStreams bounds the calls one gRPC connection may
	// have open at once; a client beyond it waits. --grpc-max-concurrent-
	// streams, default 256.
	GRPCMaxConcurrentStreams int
	// Pprof serves Go's runtime profiles (net/http/pprof: /debug/pprof/
	// heap, allocs, profile, goroutine, …) on the MetricsListen address.
	// Off by default: a CPU profile costs CPU and the endpoints reveal
	// internals. Needs MetricsListen. --pprof.
	Pprof bool
	// DataDir is the RocksDB directory, created when missing. --data-dir,
	// default "./data".
	DataDir string
	// LogLevel is a zerolog level: trace, debug, info, warn, error.
	// --log-level, default "info".
	LogLevel string
	// LogFormat is "auto" (default), "json" or "console" (human-readable).
	// auto is console when the log output (stderr in main) is a terminal
	// and JSON otherwise: readable at a prompt, machine-readable under
	// systemd, docker or a redirect. --log-format.
	LogFormat string
	// MaxFrameSize is the largest remoting frame accepted, bytes, 4-byte
	// length prefix included (com.rocketmq.remoting.frameMaxLength,
	// 16777216). --max-frame-size.
	MaxFrameSize int
	// MaxMessageSize bounds one message body on SEND, bytes
	// (maxMessageSize, 4194304). Must be below MaxFrameSize.
	// --max-message-size.
	MaxMessageSize int
	// BrokerName is this broker's name (brokerName); it is field 5 of every
	// POP receipt handle. --broker-name, default "popshim-a".
	BrokerName string
	// ClusterName is the cluster (brokerClusterName). --cluster-name,
	// default "DefaultCluster".
	ClusterName string
	// RegionID is the region every stored message carries in MSG_REGION and
	// every SEND reply reports (BrokerConfig.regionId); a client's message
	// trace needs it on consumed messages. --region-id, default
	// "DefaultRegion".
	RegionID string
	// TraceOn is BrokerConfig.traceOn: stored in each message's TRACE_ON
	// property and reported in SEND replies; a producer with message trace
	// enabled skips tracing when a reply says false. --trace-on, default
	// true.
	TraceOn bool
	// BrokerIP is the address clients are told to connect to (brokerIP1).
	// Empty: the --listen host when it is one IP address (ListenBrokerIP),
	// else the first non-loopback IPv4 address of this host, else
	// 127.0.0.1 (filled in by Load). --broker-ip.
	BrokerIP string
	// AutoCreateTopic creates unknown topics on first SEND
	// (autoCreateTopicEnable, true). --auto-create-topic.
	AutoCreateTopic bool
	// AutoCreateSubscriptionGroup creates an unknown consumer group on
	// HEART_BEAT, POP, PULL, NOTIFICATION, CONSUMER_SEND_MSG_BACK and
	// GET_SUBSCRIPTIONGROUP_CONFIG (autoCreateSubscriptionGroup, true).
	// Off, those requests answer SUBSCRIPTION_GROUP_NOT_EXIST (26) for an
	// unknown group (HEART_BEAT skips it); CID_RMQ_SYS_ groups are still
	// created. --auto-create-subscription-group.
	AutoCreateSubscriptionGroup bool
	// BrokerPermission is the broker's own permission
	// (BrokerConfig.brokerPermission; PermName bits: 4 read, 2 write,
	// 1 inherit; default 6): without read, POP, PULL and NOTIFICATION are
	// refused; without write, SENDs to order topics and
	// CONSUMER_SEND_MSG_BACK are refused; and while it lacks either, every
	// topic is registered and routed with its perm masked by it, so clients
	// move off the broker (decommissioning). Changeable at run time with
	// UPDATE_BROKER_CONFIG. --broker-permission.
	BrokerPermission int
	// DefaultTopicQueueNums is the queue count of an auto-created topic
	// (defaultTopicQueueNums, 8). --default-topic-queue-nums.
	DefaultTopicQueueNums int
	// Retention is how long messages are kept by store time
	// (fileReservedTime, 72 h). --retention.
	Retention time.Duration
	// RetentionInterval is how often expired messages are deleted.
	// --retention-interval, default 10m.
	RetentionInterval time.Duration
	// EnablePropertyFilter lets consumers filter by SQL92 selectors over
	// message properties (BrokerConfig.enablePropertyFilter): the SQL92
	// subscriptions of POP and PULL (in the request, or registered by
	// HEART_BEAT) are compiled and evaluated, and CHECK_CLIENT_CONFIG
	// accepts them. Off, POP, PULL and CHECK_CLIENT_CONFIG refuse SQL92
	// with SYSTEM_ERROR (1) "The broker does not support consumer to
	// filter message by SQL92", and a Java consumer with such a
	// subscription fails to start; HEART_BEAT registers it either way, as
	// Java's does. Default true, where Java's is false:
	// a Java broker with it on keeps consumer filter data per group and may
	// compute a bloom-filter bitmap for every stored message
	// (enableCalcFilterBitMap), so it is opt-in there; popshim evaluates a
	// selector only while a request with an SQL92 subscription scans
	// messages (no per-message work at SEND, no state), so a broker whose
	// clients use tags only pays nothing, and one whose clients use SQL92
	// works without extra configuration. An expression is at most 64 KiB
	// and a scan is bounded as for tags. --enable-property-filter.
	EnablePropertyFilter bool
	// MessageIndexEnable keeps the key index of KEYS and UNIQ_KEY that
	// QUERY_MESSAGE reads, written with each message (RocketMQ's
	// messageIndexEnable, default true). --message-index-enable.
	MessageIndexEnable bool
	// PopWriteMode is "group" (one group-commit writer, the default) or
	// "sync" (each ACK/CHANGE written synchronously by SyncWorkers workers,
	// the Java broker's behaviour, kept as a measurement baseline).
	// --pop-write-mode.
	PopWriteMode string
	// GCPercent is the Go garbage collector's target heap growth in percent
	// (runtime/debug.SetGCPercent), applied at serve start. popshim's live
	// heap is small (client table, topic metadata, queued ops), so the Go
	// default of 100 collects very often under load; 400 spends less CPU on
	// GC for a few more MiB of heap. 0 keeps the runtime's setting (the GOGC
	// environment variable, or 100). --gc-percent, default 400.
	GCPercent int
	// SyncWorkers is the worker count in sync mode
	// (ackMessageThreadPoolNums, 16). --sync-workers.
	SyncWorkers int
	// BatchMaxOps caps mutations per WriteBatch. --batch-max-ops, 4096.
	BatchMaxOps int
	// BatchMaxBytes caps the bytes of one WriteBatch; a single larger
	// mutation still forms its own batch. --batch-max-bytes, 8 MiB.
	BatchMaxBytes int
	// QueueCapacity bounds each writer lane, mutations; a full lane answers
	// SYSTEM_BUSY (ackThreadPoolQueueCapacity, 100000). --queue-capacity.
	QueueCapacity int
	// QueueMaxBytes bounds the bytes queued in all writer lanes (mostly
	// SEND bodies); past it a mutation answers SYSTEM_BUSY at once, so
	// memory under a flood of large messages stays near this bound.
	// --queue-max-bytes, default 256 MiB.
	QueueMaxBytes int64
	// ReadMaxBytes is remoting.ServerOptions.MaxReadBytes of each
	// listener: the bytes of large frames (over 64 KiB) being read or not
	// yet answered; a connection whose next frame would pass it is not
	// read until answers make room. The gRPC port has a budget of the same
	// size of its own for decoded SendMessage requests; a request beyond
	// it is answered TOO_MANY_REQUESTS. 0 (default): half of QueueMaxBytes,
	// so both ports together hold at most QueueMaxBytes of large requests
	// (SENDs still queued past --wait-time-mills-in-send-queue answer
	// SYSTEM_BUSY [TIMEOUT_CLEAN_QUEUE]); negative: no bound.
	// --read-max-bytes.
	ReadMaxBytes int64
	// ReplyMaxBytes is remoting.ServerOptions.MaxReplyBytes of the broker
	// listener: reply bytes waiting for peers to read them (outbound
	// buffers); while they reach it POP and PULL read no message bodies
	// and wait, and a connection whose peer has read none of it for 3 s while
	// the bound is reached is closed. 0 (default): half of QueueMaxBytes;
	// negative: no bound. --reply-max-bytes.
	ReplyMaxBytes int64
	// MemoryLimit is the Go runtime's soft memory limit, bytes
	// (runtime/debug.SetMemoryLimit): the GC works harder as the heap nears
	// it, so the garbage of large SENDs cannot grow the heap to
	// --gc-percent times the live data. 0 (default): --queue-max-bytes +
	// 64 MiB, raised while the live heap other than the frames the
	// listeners hold needs more, up to 2 × --queue-max-bytes + 512 MiB
	// (stack/memlimit.go), or GOMEMLIMIT's limit instead when that is set
	// (the automatic raising then stays off); a positive value (at least
	// 16 MiB) is fixed and overrides GOMEMLIMIT; negative: popshim sets
	// none (GOMEMLIMIT applies when set). --memory-limit.
	MemoryLimit int64
	// WaitTimeMillsInSendQueue: a SEND still queued for the writer after
	// this many ms answers SYSTEM_BUSY "[TIMEOUT_CLEAN_QUEUE]…" instead of
	// being written (RocketMQ's waitTimeMillsInSendQueue, 200, with
	// brokerFastFailureEnable). 0 disables. --wait-time-mills-in-send-queue.
	WaitTimeMillsInSendQueue int
	// WaitTimeMillsInTransactionQueue: an END_TRANSACTION commit still
	// queued for the writer after this many ms is dropped unwritten, the
	// half left for its check (RocketMQ's waitTimeMillsInTransactionQueue,
	// 3000: BrokerFastFailure cleans its end-transaction queue with it, not
	// with the send queue's 200 ms). Only while --wait-time-mills-in-send-queue
	// is on; 0: never dropped. --wait-time-mills-in-transaction-queue.
	WaitTimeMillsInTransactionQueue int
	// DiskSpaceWarningLevelRatio: above this used fraction of the data
	// directory's filesystem (used / (used + available), df's Use%,
	// popstore.Store.DiskUsage) SENDs answer SERVICE_NOT_AVAILABLE, as a
	// Java broker whose disk is full (diskSpaceWarningLevelRatio, 0.90);
	// ACK, CHANGE and POP keep working. Checked every second (statfs);
	// SENDs are accepted again below it minus 0.05. 0 disables.
	// --disk-space-warning-level-ratio.
	DiskSpaceWarningLevelRatio float64
	// DiskSpaceCleanForciblyRatio: above this used fraction of the data
	// directory's filesystem, retention passes run every 10 s and also
	// delete the oldest messages before --retention ends (the oldest tenth
	// of the stored time span per pass), as a Java broker with
	// cleanFileForciblyEnable deletes its oldest commit-log files above
	// diskSpaceCleanForciblyRatio (0.85). 0 disables.
	// --disk-space-clean-forcibly-ratio.
	DiskSpaceCleanForciblyRatio float64
	// WriterProbeInterval is how often, after a failed synced write, the
	// writer tries to reopen the store; work is refused until it succeeds.
	// --writer-probe-interval, default 1s.
	WriterProbeInterval time.Duration
	// RocksDBLogDir is where RocksDB writes its LOG file; "" keeps only the
	// open-time header in the data directory (run-time LOG lines on a full
	// disk abort Debian's assertion-enabled librocksdb). Use a directory on
	// another filesystem. --rocksdb-log-dir.
	RocksDBLogDir string
	// BackgroundShare is the largest fraction of a batch's ops taken from
	// the background lane (revive, retention), in (0, 1]. --background-share,
	// default 0.25.
	BackgroundShare float64
	// BatchMaxBulkOps caps the bulk-lane mutations (CHANGE_INVISIBLE_TIME)
	// in one group-commit WriteBatch, so a CHANGE burst is spread over many
	// batches and an ACK waits behind at most this many CHANGEs.
	// --batch-max-bulk-ops, default 16 (batch.DefaultMaxBulkOps).
	BatchMaxBulkOps int
	// MaxParkedPolls bounds parked long-poll requests; beyond it POP answers
	// POLLING_FULL (maxPopPollingSize, 100000). --max-parked-polls.
	MaxParkedPolls int
	// ReviveInterval is the pause between revive scans that found less than
	// a full batch. --revive-interval, default 500ms.
	ReviveInterval time.Duration
	// MaxReconsumeTimes is the default retry limit before a message goes to
	// %DLQ%<group> (maxReconsumeTimes, 16). --max-reconsume-times.
	MaxReconsumeTimes int
	// MessageDelayLevel lists the delays of DELAY levels 1..N
	// (messageDelayLevel). --message-delay-level.
	MessageDelayLevel string
	// TimerMaxDelaySec bounds how far ahead a timer message may be due
	// (timerMaxDelaySec, 3 days). --timer-max-delay-sec.
	TimerMaxDelaySec int64
	// TimerDrainShare is the share of the group-commit writer's time a
	// paced timer drain may take while ACKs, CHANGEs or SENDs arrive
	// (broker/timer, pace.go): 0 < share ≤ 1; 1 turns the pacing off.
	// --timer-drain-share; no Java equivalent (its timer has its own
	// threads and CommitLog appends).
	TimerDrainShare float64
	// TransactionTimeout: a half message without CHECK_IMMUNITY_TIME_IN_SECONDS is
	// first checked this long after it was stored (transactionTimeOut, 6 s).
	// --transaction-timeout; --transaction-check-interval and -max below.
	TransactionTimeout time.Duration
	// TransactionCheckInterval is the pause between two checks of one half
	// message (transactionCheckInterval, 30 s).
	TransactionCheckInterval time.Duration
	// TransactionCheckMax: checks of a half message before it moves to
	// TRANS_CHECK_MAX_TIME_TOPIC (transactionCheckMax, 15).
	TransactionCheckMax int
	// StoreReplyMessageEnable stores a SEND_REPLY_MESSAGE's reply in its
	// topic as well as pushing it (storeReplyMessageEnable, true).
	StoreReplyMessageEnable bool
	// RecallMessageEnable serves RECALL_MESSAGE (recallMessageEnable, false).
	RecallMessageEnable bool
	// RebalanceLockMaxLiveTime is how long a LOCK_BATCH_MQ lock lives after
	// its holder's last lock or renewal (rocketmq.broker.rebalance
	// .lockMaxLiveTime, 60 s). --rebalance-lock-max-live-time.
	RebalanceLockMaxLiveTime time.Duration
	// PopReaderWorkers is the number of POP/PULL reader goroutines.
	// --pop-reader-workers, default 4.
	PopReaderWorkers int
	// PopReaderQueue bounds requests waiting for a reader; full answers
	// SYSTEM_BUSY. --pop-reader-queue, default 10000.
	PopReaderQueue int
	// IdleTimeout closes a connection without traffic for this long
	// (serverChannelMaxIdleTimeSeconds, 120 s); 0 disables. --idle-timeout.
	IdleTimeout time.Duration
	// MaxConns bounds the connections open at once on each remoting
	// listener (broker and embedded name server, counted separately); a
	// connection beyond it is closed as soon as it is accepted and counted
	// in popshim_remoting_connections_refused_total. 0 disables the bound.
	// RocketMQ has no such bound. A bound that, with a reserve for the
	// store's files and the other listeners, does not fit RLIMIT_NOFILE
	// is lowered at start with a warning (stack/fdlimit.go). --max-conns,
	// default 10000 (DefaultMaxConns).
	MaxConns int
	// EventLoops is the number of gnet event loops per server; 0 means
	// one per CPU (runtime.NumCPU, gnet's count). --event-loops.
	EventLoops int
	// MaxHeartbeatGroups bounds the consumerDataSet and, separately, the
	// producerDataSet of one HEART_BEAT, entries; a larger heartbeat is
	// INVALID_PARAMETER (29) and registers nothing. A Java or Go client
	// sends one entry per group of its client instance (typically a few).
	// RocketMQ has no such bound. --max-heartbeat-groups, default 1000.
	MaxHeartbeatGroups int
	// MaxHeartbeatSubscriptions bounds the subscriptionDataSet of one
	// consumer group in a HEART_BEAT, entries (a push consumer lists its
	// topics plus %RETRY%<group>); beyond it the heartbeat is
	// INVALID_PARAMETER (29) and registers nothing.
	// --max-heartbeat-subscriptions, default 1000.
	MaxHeartbeatSubscriptions int
	// MaxConnClientChannels bounds the client channels (one per producer
	// or consumer group a clientID joined) registered over one connection;
	// a HEART_BEAT that would exceed it is INVALID_PARAMETER (29) and
	// registers nothing. A proxy may carry many clientIDs on one
	// connection, hence the high default. --max-conn-client-channels,
	// default 10000.
	MaxConnClientChannels int
	// TLS is the TLS setting of both remoting listeners (conf/tls.go).
	TLS TLS

	// AuthEnabled turns on ACL 2.0 authentication: every request must carry
	// an AccessKey of a known, enabled user and the Signature its password
	// gives (authenticationEnabled, false). Refusals answer NO_PERMISSION
	// (16). --auth-enabled.
	AuthEnabled bool
	// AuthAuthorization checks ACL 2.0 policies after authentication while
	// AuthEnabled (authorizationEnabled). --auth-authorization, default true.
	AuthAuthorization bool
	// AuthWhitelist lists request codes that skip authentication,
	// comma-separated (authenticationWhitelist). --auth-whitelist.
	AuthWhitelist string
	// AuthzWhitelist lists request codes that skip authorization
	// (authorizationWhitelist). --authz-whitelist.
	AuthzWhitelist string
	// AuthAdminUser and AuthAdminPassword create a super user at start
	// when it does not exist yet (initAuthenticationUser). The password is
	// never logged nor shown by GET_BROKER_CONFIG; prefer its environment
	// variable POPSHIM_AUTH_ADMIN_PASSWORD. --auth-admin-user,
	// --auth-admin-password.
	AuthAdminUser     string
	AuthAdminPassword string
	// ACLFile is an ACL 1.0 plain_acl.yml (accounts, whiteRemoteAddress,
	// admin, default and per-resource perms), reloaded when it changes.
	// Requests whose AccessKey is one of its accounts are judged by the 1.0
	// rules. Empty: none. --acl-file.
	ACLFile string
	// ShutdownTimeout bounds the graceful shutdown (drain the writer, answer
	// parked polls, close connections). --shutdown-timeout, default 10s.
	ShutdownTimeout time.Duration
}
