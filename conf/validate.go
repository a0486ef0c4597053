package conf

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"
)

// Validate checks every field and returns all problems at once, each
// naming its flag, e.g. "--batch-max-ops must be ≥ 1, got 0". It does not
// modify c.
func (c *Config) Validate() error {
	var v validator
	v.addr("listen", c.Listen, false)
	v.addr("namesrv-listen", c.NamesrvListen, true)
	v.addr("metrics-listen", c.MetricsListen, true)
	v.addr("grpc-listen", c.GRPCListen, true)
	for _, a := range c.NamesrvAddrs() {
		v.addr("namesrv-addr", a, false)
	}
	v.positiveDur("register-interval", c.RegisterInterval, time.Second)
	if c.NamesrvListen != "" && samePort(c.Listen, c.NamesrvListen) {
		v.errf("--listen %q and --namesrv-listen %q use the same port", c.Listen, c.NamesrvListen)
	}
	if c.MetricsListen != "" && (samePort(c.Listen, c.MetricsListen) || samePort(c.NamesrvListen, c.MetricsListen)) {
		v.errf("--metrics-listen %q shares a port with another listener", c.MetricsListen)
	}
	if c.GRPCListen != "" && (samePort(c.Listen, c.GRPCListen) || samePort(c.NamesrvListen, c.GRPCListen) || samePort(c.MetricsListen, c.GRPCListen)) {
		v.errf("--grpc-listen %q shares a port with another listener", c.GRPCListen)
	}
	if c.Pprof && c.MetricsListen == "" {
		v.errf("--pprof needs --metrics-listen (the profiles are served there)")
	}
	if strings.TrimSpace(c.DataDir) == "" {
		v.errf("--data-dir must not be empty")
	}
	if _, err := zerolog.ParseLevel(c.LogLevel); err != nil || c.LogLevel == "" {
		v.errf("--log-level must be one of trace|debug|info|warn|error, got %q", c.LogLevel)
	}
	switch c.LogFormat {
	case LogFormatAuto, LogFormatJSON, LogFormatConsole:
	default:
		v.errf("--log-format must be auto, json or console, got %q", c.LogFormat)
	}
	v.intRange("max-frame-size", c.MaxFrameSize, 1<<10, 1<<30)
	v.intRange("max-message-size", c.MaxMessageSize, 1, 1<<30)
	if c.MaxMessageSize >= c.MaxFrameSize {
		v.errf("--max-message-size %d must be below --max-frame-size %d (the frame also carries headers)", c.MaxMessageSize, c.MaxFrameSize)
	}
	if c.GRPCMaxRecvBytes != 0 {
		v.intRange("grpc-max-recv-bytes", c.GRPCMaxRecvBytes, 64<<10, 1<<30+64<<20)
	}
	v.intRange("grpc-max-concurrent-streams", c.GRPCMaxConcurrentStreams, 1, 1<<20)
	v.intRange("broker-permission", c.BrokerPermission, 0, 7)
	v.name("broker-name", c.BrokerName)
	v.name("cluster-name", c.ClusterName)
	v.name("region-id", c.RegionID)
	if c.BrokerIP != "" && net.ParseIP(c.BrokerIP) == nil {
		v.errf("--broker-ip must be an IP address, got %q", c.BrokerIP)
	}
	v.intRange("default-topic-queue-nums", c.DefaultTopicQueueNums, 1, 1024)
	v.positiveDur("retention", c.Retention, time.Minute)
	v.positiveDur("retention-interval", c.RetentionInterval, time.Second)
	if c.PopWriteMode != "group" && c.PopWriteMode != "sync" {
		v.errf("--pop-write-mode must be group or sync, got %q", c.PopWriteMode)
	}
	v.intRange("sync-workers", c.SyncWorkers, 1, 4096)
	v.intRange("gc-percent", c.GCPercent, 0, 100000)
	v.intRange("batch-max-ops", c.BatchMaxOps, 1, 1<<20)
	v.intRange("batch-max-bytes", c.BatchMaxBytes, 1<<10, 1<<30)
	v.intRange("queue-capacity", c.QueueCapacity, 1, 1<<24)
	v.intRange("batch-max-bulk-ops", c.BatchMaxBulkOps, 1, 1<<20)
	if c.QueueMaxBytes < 1<<20 || c.QueueMaxBytes > 1<<40 {
		v.errf("--queue-max-bytes must be in [1 MiB, 1 TiB], got %d", c.QueueMaxBytes)
	}
	if c.ReadMaxBytes > 0 && (c.ReadMaxBytes < 1<<20 || c.ReadMaxBytes > 1<<40) {
		v.errf("--read-max-bytes must be 0, negative, or in [1 MiB, 1 TiB], got %d", c.ReadMaxBytes)
	}
	if c.ReplyMaxBytes > 0 && (c.ReplyMaxBytes < 1<<20 || c.ReplyMaxBytes > 1<<40) {
		v.errf("--reply-max-bytes must be 0, negative, or in [1 MiB, 1 TiB], got %d", c.ReplyMaxBytes)
	}
	if c.MemoryLimit > 0 && c.MemoryLimit < minMemoryLimit {
		v.errf("--memory-limit must be 0 (auto), negative (none) or ≥ 16 MiB (%d), got %d", int64(minMemoryLimit), c.MemoryLimit)
	}
	v.intRange("wait-time-mills-in-send-queue", c.WaitTimeMillsInSendQueue, 0, 3600000)
	v.intRange("wait-time-mills-in-transaction-queue", c.WaitTimeMillsInTransactionQueue, 0, 3600000)
	if !(c.DiskSpaceWarningLevelRatio >= 0 && c.DiskSpaceWarningLevelRatio <= 1) {
		v.errf("--disk-space-warning-level-ratio must be in [0, 1] (0 disables), got %g", c.DiskSpaceWarningLevelRatio)
	}
	if !(c.DiskSpaceCleanForciblyRatio >= 0 && c.DiskSpaceCleanForciblyRatio <= 1) {
		v.errf("--disk-space-clean-forcibly-ratio must be in [0, 1] (0 disables), got %g", c.DiskSpaceCleanForciblyRatio)
	}
	v.positiveDur("writer-probe-interval", c.WriterProbeInterval, 10*time.Millisecond)
	if !(c.BackgroundShare > 0 && c.BackgroundShare <= 1) {
		v.errf("--background-share must be in (0, 1], got %g", c.BackgroundShare)
	}
	v.intRange("max-parked-polls", c.MaxParkedPolls, 1, 1<<24)
	v.positiveDur("revive-interval", c.ReviveInterval, 10*time.Millisecond)
	v.intRange("max-reconsume-times", c.MaxReconsumeTimes, 1, 1<<16)
	if !(c.TimerDrainShare > 0 && c.TimerDrainShare <= 1) {
		v.errf("--timer-drain-share %v: want more than 0 and at most 1", c.TimerDrainShare)
	}
	if _, err := c.DelayLevelMillis(); err != nil {
		v.errf("--message-delay-level %q: %v", c.MessageDelayLevel, err)
	}
	if c.TimerMaxDelaySec < 1 || c.TimerMaxDelaySec > 100*365*24*3600 {
		v.errf("--timer-max-delay-sec %d: want 1 to 3153600000 seconds", c.TimerMaxDelaySec)
	}
	if c.TransactionTimeout < 0 {
		v.errf("--transaction-timeout must be ≥ 0, got %s", c.TransactionTimeout)
	}
	v.positiveDur("transaction-check-interval", c.TransactionCheckInterval, time.Millisecond)
	v.intRange("transaction-check-max", c.TransactionCheckMax, 1, 1<<20)
	v.positiveDur("rebalance-lock-max-live-time", c.RebalanceLockMaxLiveTime, time.Millisecond)
	v.intRange("pop-reader-workers", c.PopReaderWorkers, 1, 1024)
	v.intRange("pop-reader-queue", c.PopReaderQueue, 1, 1<<24)
	if c.IdleTimeout < 0 {
		v.errf("--idle-timeout must be ≥ 0 (0 disables), got %s", c.IdleTimeout)
	}
	v.intRange("max-conns", c.MaxConns, 0, 1<<24)
	v.intRange("event-loops", c.EventLoops, 0, 1024)
	v.intRange("max-heartbeat-groups", c.MaxHeartbeatGroups, 1, 1<<20)
	v.intRange("max-heartbeat-subscriptions", c.MaxHeartbeatSubscriptions, 1, 1<<20)
	v.intRange("max-conn-client-channels", c.MaxConnClientChannels, 1, 1<<24)
	v.positiveDur("shutdown-timeout", c.ShutdownTimeout, 0)
	c.validateTLS(&v)
	if (c.AuthAdminUser == "") != (c.AuthAdminPassword == "") {
		v.errf("--auth-admin-user and --auth-admin-password go together")
	}
	for flag, codes := range map[string]string{"auth-whitelist": c.AuthWhitelist, "authz-whitelist": c.AuthzWhitelist} {
		for _, p := range strings.Split(codes, ",") {
			if p = strings.TrimSpace(p); p != "" {
				if _, err := strconv.ParseInt(p, 10, 32); err != nil {
					v.errf("--%s: %q is not a request code", flag, p)
				}
			}
		}
	}
	return v.err()
}

// minMemoryLimit is the least positive --memory-limit accepted. Below it
// the Go runtime collects almost continuously: --memory-limit=1 ran 1,825
// GCs instead of 52 and cut produce throughput from 72,749/s to 15,602/s.
const minMemoryLimit = 16 << 20

// validator collects problems so Validate reports all of them at once.
type validator struct{ problems []string }

func (v *validator) errf(format string, args ...any) {
	v.problems = append(v.problems, fmt.Sprintf(format, args...))
}

func (v *validator) err() error {
	if len(v.problems) == 0 {
		return nil
	}
	return errors.New("conf: invalid configuration: " + strings.Join(v.problems, "; "))
}

// addr checks host:port with a numeric port 0..65535.
func (v *validator) addr(flag, a string, emptyOK bool) {
	if a == "" {
		if !emptyOK {
			v.errf("--%s must not be empty", flag)
		}
		return
	}
	_, port, err := net.SplitHostPort(a)
	if err != nil {
		v.errf("--%s must be host:port, got %q: %v", flag, a, err)
		return
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		v.errf("--%s port must be 0..65535, got %q", flag, port)
	}
}

func (v *validator) intRange(flag string, n, lo, hi int) {
	if n < lo || n > hi {
		v.errf("--%s must be in [%d, %d], got %d", flag, lo, hi, n)
	}
}

func (v *validator) positiveDur(flag string, d, atLeast time.Duration) {
	if d <= 0 || d < atLeast {
		if atLeast > 0 {
			v.errf("--%s must be ≥ %s, got %s", flag, atLeast, d)
		} else {
			v.errf("--%s must be > 0, got %s", flag, d)
		}
	}
}

// name checks a broker or cluster name: non-empty, no whitespace and none of
// the separators RocketMQ uses inside keys and receipt handles (' ', '@', '%').
func (v *validator) name(flag, s string) {
	if s == "" {
		v.errf("--%s must not be empty", flag)
		return
	}
	if strings.ContainsAny(s, " \t\r\n@%") {
		v.errf("--%s %q must not contain whitespace, '@' or '%%'", flag, s)
	}
	if strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		// also keeps the property separators 0x01 and 0x02 out of the
		// CLUSTER and MSG_REGION values stamped on every message
		v.errf("--%s %q must not contain control characters", flag, s)
	}
}

// samePort reports whether two listen addresses name the same non-zero
// port on overlapping hosts (an empty host or 0.0.0.0 overlaps every host).
func samePort(a, b string) bool {
	ha, pa, err1 := net.SplitHostPort(a)
	hb, pb, err2 := net.SplitHostPort(b)
	if err1 != nil || err2 != nil || pa != pb || pa == "0" {
		return false
	}
	wild := func(h string) bool { return h == "" || h == "0.0.0.0" || h == "::" }
	return ha == hb || wild(ha) || wild(hb)
}
