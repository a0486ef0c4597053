package conf

import (
	"fmt"
	"net"
	"strings"

	"github.com/spf13/pflag"
)

// EnvPrefix starts every environment variable conf reads.
const EnvPrefix = "POPSHIM_"

// SecretFlags are flags whose values are secrets: GET_BROKER_CONFIG leaves
// them out and nothing logs them.
var SecretFlags = map[string]bool{"auth-admin-password": true}

// EnvName is the environment variable of a flag: "data-dir" →
// "POPSHIM_DATA_DIR".
func EnvName(flag string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// BindFlags registers one flag per Config field on fs, with c's current
// values as defaults (call it on Default()). Each usage line names its
// environment variable. Call from the goroutine that builds the command.
func (c *Config) BindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.Listen, "listen", c.Listen, "broker remoting listen address host:port")
	fs.StringVar(&c.NamesrvListen, "namesrv-listen", c.NamesrvListen, "embedded name server listen address host:port; empty disables")
	fs.StringVar(&c.NamesrvAddr, "namesrv-addr", c.NamesrvAddr, "external name servers to REGISTER_BROKER with, 'host:port;host:port'; empty = none")
	fs.DurationVar(&c.RegisterInterval, "register-interval", c.RegisterInterval, "period of REGISTER_BROKER to --namesrv-addr")
	fs.StringVar(&c.MetricsListen, "metrics-listen", c.MetricsListen, "Prometheus /metrics listen address host:port; empty disables")
	fs.StringVar(&c.GRPCListen, "grpc-listen", c.GRPCListen, "RocketMQ 5 gRPC endpoint (MessagingService for the v5 SDKs) listen address host:port, TLS as --tls-mode; empty disables")
	fs.IntVar(&c.GRPCMaxRecvBytes, "grpc-max-recv-bytes", c.GRPCMaxRecvBytes, "largest request the gRPC port reads, bytes; a larger one fails with gRPC status RESOURCE_EXHAUSTED; 0 = --max-message-size + 1 MiB")
	fs.IntVar(&c.GRPCMaxConcurrentStreams, "grpc-max-concurrent-streams", c.GRPCMaxConcurrentStreams, "most calls one gRPC connection may have open at once (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS); a client beyond it waits")
	fs.BoolVar(&c.Pprof, "pprof", c.Pprof, "also serve Go's runtime profiles under /debug/pprof/ on --metrics-listen")
	fs.StringVar(&c.DataDir, "data-dir", c.DataDir, "RocksDB data directory (created when missing)")
	fs.StringVar(&c.LogLevel, "log-level", c.LogLevel, "log level: trace|debug|info|warn|error")
	fs.StringVar(&c.LogFormat, "log-format", c.LogFormat, "log format: auto|json|console; auto = console when the log output (stderr) is a terminal, else json")
	fs.IntVar(&c.MaxFrameSize, "max-frame-size", c.MaxFrameSize, "largest remoting frame accepted, bytes (length prefix included)")
	fs.IntVar(&c.MaxMessageSize, "max-message-size", c.MaxMessageSize, "largest message body accepted on SEND, bytes")
	fs.StringVar(&c.BrokerName, "broker-name", c.BrokerName, "broker name (brokerName), part of every receipt handle")
	fs.StringVar(&c.ClusterName, "cluster-name", c.ClusterName, "cluster name (brokerClusterName)")
	fs.StringVar(&c.RegionID, "region-id", c.RegionID, "region stored in every message's MSG_REGION property and reported in SEND replies (regionId)")
	fs.BoolVar(&c.TraceOn, "trace-on", c.TraceOn, "TRACE_ON of stored messages and SEND replies; false makes producers with message trace skip it (traceOn)")
	fs.StringVar(&c.BrokerIP, "broker-ip", c.BrokerIP, "advertised broker IP (brokerIP1); empty = the --listen host when it is one IP address, else the first non-loopback IPv4, else 127.0.0.1")
	fs.BoolVar(&c.AutoCreateTopic, "auto-create-topic", c.AutoCreateTopic, "create unknown topics on first SEND (autoCreateTopicEnable)")
	fs.BoolVar(&c.AutoCreateSubscriptionGroup, "auto-create-subscription-group", c.AutoCreateSubscriptionGroup, "create unknown consumer groups on HEART_BEAT, POP, PULL and GET_SUBSCRIPTIONGROUP_CONFIG (autoCreateSubscriptionGroup); off: unknown groups get SUBSCRIPTION_GROUP_NOT_EXIST (26)")
	fs.IntVar(&c.BrokerPermission, "broker-permission", c.BrokerPermission, "the broker's own permission (brokerPermission): 6 read and write, 4 read only (decommissioning: producers move away), 2 write only; routes and name-server registrations mask every topic's perm with it; changeable with mqadmin updateBrokerConfig")
	fs.IntVar(&c.DefaultTopicQueueNums, "default-topic-queue-nums", c.DefaultTopicQueueNums, "queue count of auto-created topics (defaultTopicQueueNums); a SEND that creates one gets at most its producer's defaultTopicQueueNums")
	fs.DurationVar(&c.Retention, "retention", c.Retention, "how long messages are kept (fileReservedTime)")
	fs.DurationVar(&c.RetentionInterval, "retention-interval", c.RetentionInterval, "how often expired messages are deleted")
	fs.BoolVar(&c.EnablePropertyFilter, "enable-property-filter", c.EnablePropertyFilter, "serve SQL92 property filters (MessageSelector.bySql): POP and PULL evaluate them, CHECK_CLIENT_CONFIG accepts them (enablePropertyFilter; default true, Java's false: popshim evaluates selectors only while such a request scans, nothing per stored message); off: SQL92 subscriptions get SYSTEM_ERROR (1)")
	fs.BoolVar(&c.MessageIndexEnable, "message-index-enable", c.MessageIndexEnable, "index KEYS and UNIQ_KEY of every stored message for QUERY_MESSAGE (messageIndexEnable)")
	fs.StringVar(&c.PopWriteMode, "pop-write-mode", c.PopWriteMode, "ACK/CHANGE/POP persistence: group (one group-commit writer) | sync (per-op synced writes on --sync-workers, baseline)")
	fs.IntVar(&c.GCPercent, "gc-percent", c.GCPercent, "Go GC target heap growth, percent (runtime/debug.SetGCPercent); 0 = keep GOGC / the runtime default")
	fs.IntVar(&c.SyncWorkers, "sync-workers", c.SyncWorkers, "writer workers in --pop-write-mode=sync")
	fs.IntVar(&c.BatchMaxOps, "batch-max-ops", c.BatchMaxOps, "most mutations per group-commit WriteBatch")
	fs.IntVar(&c.BatchMaxBytes, "batch-max-bytes", c.BatchMaxBytes, "most bytes per group-commit WriteBatch")
	fs.IntVar(&c.QueueCapacity, "queue-capacity", c.QueueCapacity, "bound of each writer lane, mutations; full answers SYSTEM_BUSY")
	fs.Int64Var(&c.QueueMaxBytes, "queue-max-bytes", c.QueueMaxBytes, "bound of the bytes queued in all writer lanes; past it SYSTEM_BUSY. Also sizes memory: the read budgets and the Go memory limit follow it, and the messages memtable is what it leaves above 128 MiB (16–128 MiB)")
	fs.Int64Var(&c.ReadMaxBytes, "read-max-bytes", c.ReadMaxBytes, "bound of the bytes of large frames (over 64 KiB) each listener holds while reading them and until they are answered; past it connections sending one are not read, and one that trickles such a frame while others wait is closed; the gRPC port reads at most as many bytes of SendMessage requests at once and holds as many decoded, beyond them TOO_MANY_REQUESTS; 0 = half of --queue-max-bytes, negative = none")
	fs.Int64Var(&c.ReplyMaxBytes, "reply-max-bytes", c.ReplyMaxBytes, "bound of the reply bytes the broker port holds for clients that have not read them; while they reach it POP and PULL read no messages and wait (answering empty at the end of their poll), and a connection whose client has read none of it for 3 s while the bound is reached is closed; 0 = half of --queue-max-bytes, negative = none")
	fs.Int64Var(&c.MemoryLimit, "memory-limit", c.MemoryLimit, "Go soft memory limit, bytes; 0 = --queue-max-bytes + 64 MiB, raised up to 2 × --queue-max-bytes + 512 MiB while the heap other than held frames needs more, or GOMEMLIMIT when set; a positive value (≥ 16 MiB) is fixed and overrides GOMEMLIMIT; negative = none from popshim (GOMEMLIMIT applies if set)")
	fs.IntVar(&c.WaitTimeMillsInSendQueue, "wait-time-mills-in-send-queue", c.WaitTimeMillsInSendQueue, "a SEND queued longer than this (ms) answers SYSTEM_BUSY [TIMEOUT_CLEAN_QUEUE] unwritten (waitTimeMillsInSendQueue); 0 disables")
	fs.IntVar(&c.WaitTimeMillsInTransactionQueue, "wait-time-mills-in-transaction-queue", c.WaitTimeMillsInTransactionQueue, "an END_TRANSACTION commit queued longer than this (ms) is dropped unwritten and its half left for the check (waitTimeMillsInTransactionQueue); only while --wait-time-mills-in-send-queue is on; 0 = never")
	fs.Float64Var(&c.DiskSpaceCleanForciblyRatio, "disk-space-clean-forcibly-ratio", c.DiskSpaceCleanForciblyRatio, "above this used fraction of the data filesystem retention also deletes the oldest messages before --retention ends (diskSpaceCleanForciblyRatio); 0 disables")
	fs.Float64Var(&c.DiskSpaceWarningLevelRatio, "disk-space-warning-level-ratio", c.DiskSpaceWarningLevelRatio, "above this used fraction of the data filesystem SENDs answer SERVICE_NOT_AVAILABLE (diskSpaceWarningLevelRatio); 0 disables")
	fs.DurationVar(&c.WriterProbeInterval, "writer-probe-interval", c.WriterProbeInterval, "after a failed synced write, how often the store is reopened and probed until writes succeed")
	fs.StringVar(&c.RocksDBLogDir, "rocksdb-log-dir", c.RocksDBLogDir, "directory for RocksDB's LOG file (use another filesystem); empty: only the open-time header, in the data directory")
	fs.Float64Var(&c.BackgroundShare, "background-share", c.BackgroundShare, "largest fraction of a batch taken from the background lane (0,1]")
	fs.IntVar(&c.BatchMaxBulkOps, "batch-max-bulk-ops", c.BatchMaxBulkOps, "most bulk-lane mutations (CHANGE_INVISIBLE_TIME) per group-commit WriteBatch; ACKs wait behind at most this many")
	fs.IntVar(&c.MaxParkedPolls, "max-parked-polls", c.MaxParkedPolls, "bound of parked long-poll requests; beyond it POP answers POLLING_FULL")
	fs.DurationVar(&c.ReviveInterval, "revive-interval", c.ReviveInterval, "pause between revive scans")
	fs.IntVar(&c.MaxReconsumeTimes, "max-reconsume-times", c.MaxReconsumeTimes, "retries before a message goes to the DLQ: retryMaxTimes of consumer groups created from now on, and of groups without a stored config")
	fs.StringVar(&c.MessageDelayLevel, "message-delay-level", c.MessageDelayLevel, "delays of DELAY levels 1..N, space-separated, unit s, m, h or d (messageDelayLevel); a higher level is the last")
	fs.Float64Var(&c.TimerDrainShare, "timer-drain-share", c.TimerDrainShare, "share of the writer's time a large timer drain may take while ACKs, CHANGEs or SENDs arrive (0 < share ≤ 1; 1: no pacing); smaller keeps ACK latency flatter and drains slower")
	fs.Int64Var(&c.TimerMaxDelaySec, "timer-max-delay-sec", c.TimerMaxDelaySec, "how far ahead a timer message (TIMER_DELIVER_MS, TIMER_DELAY_SEC, TIMER_DELAY_MS) may be due; beyond it SEND answers MESSAGE_ILLEGAL (timerMaxDelaySec)")
	fs.DurationVar(&c.TransactionTimeout, "transaction-timeout", c.TransactionTimeout, "how long after it was stored a transactional half message is first checked with CHECK_TRANSACTION_STATE, unless it sets CHECK_IMMUNITY_TIME_IN_SECONDS (transactionTimeOut)")
	fs.DurationVar(&c.TransactionCheckInterval, "transaction-check-interval", c.TransactionCheckInterval, "pause between two checks of one undecided half message, and after start before the first check (transactionCheckInterval)")
	fs.BoolVar(&c.StoreReplyMessageEnable, "store-reply-message-enable", c.StoreReplyMessageEnable, "store a request-reply reply (SEND_REPLY_MESSAGE) in its topic as well as pushing it to the requester (storeReplyMessageEnable)")
	fs.BoolVar(&c.RecallMessageEnable, "recall-message-enable", c.RecallMessageEnable, "serve RECALL_MESSAGE: cancel a pending timer message with the recall handle of its SEND reply (recallMessageEnable); off: NO_PERMISSION")
	fs.IntVar(&c.TransactionCheckMax, "transaction-check-max", c.TransactionCheckMax, "checks of a half message before it moves to TRANS_CHECK_MAX_TIME_TOPIC (transactionCheckMax)")
	fs.DurationVar(&c.RebalanceLockMaxLiveTime, "rebalance-lock-max-live-time", c.RebalanceLockMaxLiveTime, "how long an orderly consumer's queue lock (LOCK_BATCH_MQ) lives after its holder last locked it; then another client may take the queue (rocketmq.broker.rebalance.lockMaxLiveTime)")
	fs.IntVar(&c.PopReaderWorkers, "pop-reader-workers", c.PopReaderWorkers, "POP/PULL reader goroutines")
	fs.IntVar(&c.PopReaderQueue, "pop-reader-queue", c.PopReaderQueue, "requests waiting for a reader; full answers SYSTEM_BUSY")
	fs.DurationVar(&c.IdleTimeout, "idle-timeout", c.IdleTimeout, "close connections without traffic for this long; 0 disables")
	fs.IntVar(&c.MaxConns, "max-conns", c.MaxConns, "most connections open at once on each listener (broker, name server; gRPC accepts at most as many, further ones wait); beyond it a new connection is closed at once; 0 disables; lowered at start, with a warning, to fit the open-file limit (ulimit -n)")
	fs.IntVar(&c.EventLoops, "event-loops", c.EventLoops, "gnet event loops per listener; 0 = one per CPU (runtime.NumCPU, as gnet counts them)")
	fs.IntVar(&c.MaxHeartbeatGroups, "max-heartbeat-groups", c.MaxHeartbeatGroups, "most consumer groups, and most producer groups, one HEART_BEAT may list; beyond it INVALID_PARAMETER")
	fs.IntVar(&c.MaxHeartbeatSubscriptions, "max-heartbeat-subscriptions", c.MaxHeartbeatSubscriptions, "most subscriptions one consumer group of a HEART_BEAT may list; beyond it INVALID_PARAMETER")
	fs.IntVar(&c.MaxConnClientChannels, "max-conn-client-channels", c.MaxConnClientChannels, "most producer/consumer group memberships registered over one connection; a HEART_BEAT beyond it is INVALID_PARAMETER")
	c.bindTLSFlags(fs)
	fs.BoolVar(&c.AuthEnabled, "auth-enabled", c.AuthEnabled, "require ACL 2.0 authentication (AccessKey + HMAC-SHA1 Signature) on every request, both ports (authenticationEnabled)")
	fs.BoolVar(&c.AuthAuthorization, "auth-authorization", c.AuthAuthorization, "with --auth-enabled, also check ACL 2.0 policies (authorizationEnabled)")
	fs.StringVar(&c.AuthWhitelist, "auth-whitelist", c.AuthWhitelist, "request codes that skip authentication, comma-separated (authenticationWhitelist)")
	fs.StringVar(&c.AuthzWhitelist, "authz-whitelist", c.AuthzWhitelist, "request codes that skip authorization, comma-separated (authorizationWhitelist)")
	fs.StringVar(&c.AuthAdminUser, "auth-admin-user", c.AuthAdminUser, "super user created at start when missing (initAuthenticationUser); needs --auth-admin-password")
	fs.StringVar(&c.AuthAdminPassword, "auth-admin-password", c.AuthAdminPassword, "password of --auth-admin-user; never logged or shown by GET_BROKER_CONFIG")
	fs.StringVar(&c.ACLFile, "acl-file", c.ACLFile, "ACL 1.0 plain_acl.yml; its accounts are checked by the 1.0 rules, reloaded on change; empty = none")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", c.ShutdownTimeout, "bound of the graceful shutdown")
	fs.VisitAll(func(f *pflag.Flag) {
		f.Usage += " (env " + EnvName(f.Name) + ")"
	})
}

// Load completes c after fs was parsed: every flag not set on the command
// line takes its POPSHIM_* variable from lookup (os.LookupEnv in main) when
// present, BrokerIP is detected when empty, then Validate runs. Errors name
// the variable or flag at fault.
func (c *Config) Load(fs *pflag.FlagSet, lookup func(string) (string, bool)) error {
	var errs []string
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed {
			return
		}
		v, ok := lookup(EnvName(f.Name))
		if !ok {
			return
		}
		if err := fs.Set(f.Name, v); err != nil {
			errs = append(errs, fmt.Sprintf("%s=%q: %v", EnvName(f.Name), v, err))
		}
	})
	if len(errs) > 0 {
		return fmt.Errorf("conf: bad environment: %s", strings.Join(errs, "; "))
	}
	if c.BrokerIP == "" {
		c.BrokerIP = ListenBrokerIP(c.Listen)
	}
	if c.BrokerIP == "" {
		c.BrokerIP = DetectBrokerIP()
	}
	return c.Validate()
}

// ListenBrokerIP returns the IP of listen (host:port) when it names one
// specific address, e.g. "127.0.0.1" for "127.0.0.1:10911", and "" when the
// host is empty, unspecified (0.0.0.0, ::), a name, or listen does not parse:
// a broker bound to one address is reachable only there, so that is the
// address to advertise (brokerIP1) when --broker-ip is not given.
func ListenBrokerIP(listen string) string {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return ""
	}
	ip := net.ParseIP(host)
	if ip == nil || ip.IsUnspecified() {
		return ""
	}
	return ip.String()
}

// DetectBrokerIP returns the first non-loopback, non-link-local IPv4
// address of this host's interfaces, or "127.0.0.1" when there is none.
func DetectBrokerIP() string {
	addrs, err := net.InterfaceAddrs()
	if err == nil {
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			ip := ipn.IP.To4()
			if ip != nil && !ip.IsLoopback() && !ip.IsLinkLocalUnicast() && !ip.IsUnspecified() {
				return ip.String()
			}
		}
	}
	return "127.0.0.1"
}
