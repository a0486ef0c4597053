package bench

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/pflag"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// Options configure one network bench run (RunAck, RunPop, RunProduce,
// RunHeartbeat). Zero fields take the documented default in Normalize; on
// the command line an explicit 0 where it means nothing (--conns=0,
// --invisible-time=0 …) is refused instead (CheckFlags).
type Options struct {
	// Addr is the broker's remoting address, host:port. --addr, default
	// "127.0.0.1:10911".
	Addr string
	// BrokerName is the broker's brokerName, written into every receipt
	// handle (extraInfo field 5) the bench builds, as a Java client does from
	// its route. --broker-name, default "popshim-a" (popshim's default).
	BrokerName string
	// Topic and Group name the bench topic and consumerGroup. Empty: a fresh
	// "bench_<unix ms>" / "bench_group_<unix ms>" per run, so no state of an
	// earlier run is seen. --topic, --group.
	Topic, Group string
	// Queues is the bench topic's queue count (read = write). --queues, 8.
	Queues int
	// CreateTopic sends UPDATE_AND_CREATE_TOPIC (17) before producing.
	// --create-topic, default true.
	CreateTopic bool
	// Conns is the number of TCP connections. --conns, default 16.
	Conns int
	// Inflight is the number of pipelined requests per connection of the
	// main stream. --inflight, default 32.
	Inflight int
	// Duration bounds the measured phase (prepare is not counted). The run
	// also ends early when the prepared receipt handles run out.
	// --duration, default 20s.
	Duration time.Duration
	// Rate is the target rate of the main stream, requests per second; 0
	// runs open loop at max (every reply immediately issues the next
	// request). --rate.
	Rate int
	// Messages is how many messages are produced and popped before the run
	// (receipt handles held); each ACK consumes one. --messages, 200000.
	Messages int
	// ProduceBatch is the number of messages per SEND_BATCH_MESSAGE of the
	// prepare phase (1: SEND_MESSAGE_V2). --produce-batch, default 32.
	ProduceBatch int
	// ChangeBurst CHANGE_MESSAGE_INVISIBLETIME requests are sent at once
	// every ChangePeriod; 0 disables bursts. --change-burst, default 2000
	// on the command line (0 in a zero Options); --change-period, default 1s.
	ChangeBurst  int
	ChangePeriod time.Duration
	// ChangePool is how many prepared handles are kept for CHANGE (a changed
	// handle is reused with its new popTime). --change-pool, default
	// 2×ChangeBurst.
	ChangePool int
	// InvisibleTime is the invisibleTime of the prepare POPs and of every
	// CHANGE, so nothing revives during the run. --invisible-time, 300s.
	InvisibleTime time.Duration
	// Orderly makes the pop mode's POPs orderly (order=true): each queue's
	// next batch is blocked until the previous one is acked, so a POP in
	// flight parks until the ACKs of the batch before it are durable.
	// --orderly (pop mode).
	Orderly bool
	// TimerSpread makes the timer mode fill instead of drain: the
	// Messages timers fall due evenly over this span, starting
	// TimerSpreadStart after the run, and the run reports the fill (no
	// delivery is awaited). --timer-spread (timer mode); 0 = all due at
	// once.
	TimerSpread time.Duration
	// TimerSpreadStart is when the first spread timer is due, from the
	// start of the run. --timer-spread-start, default 1h.
	TimerSpreadStart time.Duration
	// BodySize is the message body size in bytes. --body-size, default 128.
	BodySize int
	// RandomBody fills message bodies with random bytes, which no
	// compression shrinks (a broker that compresses stored data would look
	// cheaper on the default constant bodies than on real traffic).
	// --random-body.
	RandomBody bool
	// Keys is how many space-separated KEYS each message of `bench produce`
	// carries besides its UNIQ_KEY (each one is a key-index entry on the
	// broker). --keys, default 0.
	Keys int
	// Interval is the period of the report lines. --interval, default 1s.
	Interval time.Duration
	// MetricsURL is the server's Prometheus endpoint (popshim:
	// http://<--metrics-listen>/metrics); empty skips server counters.
	// --metrics-url.
	MetricsURL string
	// ServerPIDs are the server's processes, whose CPU time is read from
	// /proc/<pid>/stat and summed: one broker, or a rocketmq-proxy and the
	// broker behind it. --server-pid, repeatable or comma-separated.
	ServerPIDs []int
	// SettleMax bounds the wait between the prepare phase and the measured
	// phase for the server (ServerPIDs) to go idle, i.e. to finish the
	// background work the prepare phase left (see settle); 0 = no wait.
	// --settle-max, default 90s on the command line.
	SettleMax time.Duration
	// SettleCPU is the idle threshold of that wait: the server's CPU use
	// over one second, in percent of one core. --settle-cpu, default 10
	// (also when zero or negative).
	SettleCPU float64
	// SettleAfter, when > 0 with ServerPIDs, extends the window of the
	// server's cost (Report.Cost) past the last reply until the server is
	// idle (SettleCPU) or SettleAfter has passed, so background work the
	// run caused is charged to it. --settle-after, default 0.
	SettleAfter time.Duration
	// FsyncProbeDir and FsyncProbeEvery: during the measured phase, a 4 KiB
	// write+fdatasync on a file in a temporary directory under
	// FsyncProbeDir every FsyncProbeEvery (0: no probe; else at least
	// 1ms, and FsyncProbeDir must be writable), reported as
	// Report.Disk. --fsync-probe-dir (default the temp dir: give the
	// broker's data disk), --fsync-probe-every (default 50ms).
	FsyncProbeDir   string
	FsyncProbeEvery time.Duration
	// CPUProfile, when set with MetricsURL, is where the server's CPU
	// profile of the measured phase is written (pprof format, from
	// /debug/pprof/profile beside /metrics: popshim serve --pprof).
	// --cpu-profile.
	CPUProfile string
	// Workload names the run's workload in a cost series (Report.Workload).
	// --workload.
	Workload string
	// Label names the run in reports and comparisons (e.g. "group",
	// "sync", "rocketmq-5.5.1"). --label, default the mode.
	Label string
	// Round is the run's round number in a make bench series (1, 2, …;
	// 0 = not part of one). bench compare pairs runs of different labels
	// by it. --round.
	Round int
	// JSON is the path of the final JSON report; "-" is stdout (the human
	// lines then go to stderr). --json.
	JSON string
	// Plot is the path of a latency-over-time plot; the extension (.svg or
	// .png) picks the format. --plot.
	Plot string
	// Quiet suppresses the per-interval lines. --quiet.
	Quiet bool
	// TLS makes every connection speak TLS (crypto/tls, TLS 1.2 or newer)
	// without verifying the server's certificate, so a popshim started
	// with a self-signed test certificate (--tls-cert) can be measured.
	// --tls.
	TLS bool
	// AccessKey and SecretKey, when AccessKey is set, sign every request
	// as RocketMQ's AclClientRPCHook does (client.SignRequest), for a broker with
	// --auth-enabled. The prepared ACK and CHANGE frames are signed when
	// prepared, so signing costs the load generator nothing in the
	// measured phase. --access-key, --secret-key (or
	// POPSHIM_BENCH_SECRET_KEY).
	AccessKey, SecretKey string
	// GRPC holds the settings of the v5 gRPC modes only.
	GRPC GRPCOptions

	// Out receives the human-readable lines; nil is io.Discard.
	Out io.Writer
	// Log receives progress and connection events; nil disables.
	Log *zerolog.Logger
}

// DefaultOptions returns Options with every default filled in.
func DefaultOptions() Options {
	o := Options{CreateTopic: true}
	o.Normalize()
	return o
}

// Normalize fills zero fields with their defaults. It does not validate.
func (o *Options) Normalize() {
	def := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	defD := func(p *time.Duration, v time.Duration) {
		if *p == 0 {
			*p = v
		}
	}
	if o.Addr == "" {
		o.Addr = "127.0.0.1:10911"
	}
	if o.BrokerName == "" {
		o.BrokerName = "popshim-a"
	}
	def(&o.Queues, 8)
	def(&o.Conns, 16)
	def(&o.Inflight, 32)
	defD(&o.Duration, 20*time.Second)
	def(&o.Messages, 200000)
	def(&o.ProduceBatch, 32)
	defD(&o.ChangePeriod, time.Second)
	if o.ChangePool == 0 {
		o.ChangePool = 2 * o.ChangeBurst
	}
	defD(&o.InvisibleTime, 300*time.Second)
	def(&o.BodySize, 128)
	defD(&o.Interval, time.Second)
	if o.SettleCPU <= 0 {
		o.SettleCPU = 10
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Log == nil {
		l := zerolog.Nop()
		o.Log = &l
	}
}

// Validate reports the first option out of range, a --server-pid with no
// such process, or, with the fsync probe on, an --fsync-probe-dir the
// bench cannot write in (checkRun).
func (o *Options) Validate() error {
	switch {
	case o.Queues < 1 || o.Queues > 1024:
		return fmt.Errorf("bench: --queues %d out of [1, 1024]", o.Queues)
	case o.Conns < 1 || o.Conns > 4096:
		return fmt.Errorf("bench: --conns %d out of [1, 4096]", o.Conns)
	case o.Inflight < 1 || o.Inflight > 65536:
		return fmt.Errorf("bench: --inflight %d out of [1, 65536]", o.Inflight)
	case o.Duration <= 0:
		return errors.New("bench: --duration must be positive")
	case o.Round < 0:
		return errors.New("bench: --round must be >= 0")
	case o.Rate < 0:
		return errors.New("bench: --rate must be >= 0")
	case o.ProduceBatch < 1 || o.ProduceBatch > 1024:
		return fmt.Errorf("bench: --produce-batch %d out of [1, 1024]", o.ProduceBatch)
	case o.Messages < 1:
		return errors.New("bench: --messages must be positive")
	case o.ChangeBurst < 0 || o.ChangePool < 0:
		return errors.New("bench: --change-burst and --change-pool must be >= 0")
	case o.ChangeBurst > 0 && o.ChangePool < 1:
		return errors.New("bench: --change-pool must be positive when --change-burst is")
	case o.ChangePeriod <= 0 || o.Interval <= 0:
		return errors.New("bench: --change-period and --interval must be positive")
	case o.InvisibleTime < time.Second:
		return errors.New("bench: --invisible-time must be at least 1s")
	case o.BodySize < 1 || o.BodySize > 4<<20:
		return fmt.Errorf("bench: --body-size %d out of [1, 4 MiB]", o.BodySize)
	case o.Keys < 0 || o.Keys > 64:
		return fmt.Errorf("bench: --keys %d out of [0, 64]", o.Keys)
	}
	return o.checkRun()
}

// names fills Topic, Group and Label when empty; stamp is Unix ms.
func (o *Options) names(mode string, stamp int64) {
	s := strconv.FormatInt(stamp, 10)
	if o.Topic == "" {
		o.Topic = "bench_" + s
	}
	if o.Group == "" {
		o.Group = "bench_group_" + s
	}
	if o.Label == "" {
		o.Label = mode
	}
}

// BindFlags registers the flags of the network modes on fs with o's values
// as defaults (call it on DefaultOptions()). withChange adds the CHANGE
// burst flags (ack mode only). Call from the goroutine that builds the
// command.
func (o *Options) BindFlags(fs *pflag.FlagSet, withChange bool) {
	fs.StringVar(&o.Addr, "addr", o.Addr, "broker remoting address host:port")
	fs.StringVar(&o.BrokerName, "broker-name", o.BrokerName, "the broker's brokerName (receipt handle field 5)")
	fs.StringVar(&o.Topic, "topic", o.Topic, "bench topic; empty: a fresh bench_<ms> per run")
	fs.StringVar(&o.Group, "group", o.Group, "consumerGroup; empty: a fresh bench_group_<ms> per run")
	fs.IntVar(&o.Queues, "queues", o.Queues, "queues of the bench topic")
	fs.BoolVar(&o.CreateTopic, "create-topic", o.CreateTopic, "send UPDATE_AND_CREATE_TOPIC first")
	fs.IntVar(&o.Conns, "conns", o.Conns, "TCP connections")
	fs.IntVar(&o.Inflight, "inflight", o.Inflight, "pipelined requests per connection")
	fs.DurationVar(&o.Duration, "duration", o.Duration, "length of the measured phase")
	fs.IntVar(&o.Rate, "rate", o.Rate, "target requests/s of the main stream; 0 = open loop at max")
	fs.IntVar(&o.Messages, "messages", o.Messages, "messages produced and popped before the run (receipt handles)")
	fs.IntVar(&o.ProduceBatch, "produce-batch", o.ProduceBatch, "messages per SEND_BATCH_MESSAGE when preparing (1 = SEND_MESSAGE_V2)")
	fs.IntVar(&o.BodySize, "body-size", o.BodySize, "message body bytes")
	fs.IntVar(&o.Keys, "keys", o.Keys, "produce mode: space-separated KEYS per message (key-index entries), besides UNIQ_KEY")
	fs.DurationVar(&o.InvisibleTime, "invisible-time", o.InvisibleTime, "invisibleTime of prepare POPs and of CHANGEs")
	fs.DurationVar(&o.Interval, "interval", o.Interval, "report line period")
	fs.StringVar(&o.MetricsURL, "metrics-url", o.MetricsURL, "server Prometheus endpoint, e.g. http://127.0.0.1:5557/metrics")
	fs.IntSliceVar(&o.ServerPIDs, "server-pid", o.ServerPIDs, "server pid, for its CPU time from /proc; repeat (or comma-separate) to sum several processes, e.g. a proxy and its broker")
	fs.DurationVar(&o.SettleMax, "settle-max", 90*time.Second, "after preparing, wait up to this long for the server (--server-pid) to go idle before measuring; 0 = no wait")
	fs.Float64Var(&o.SettleCPU, "settle-cpu", 10, "the server counts as idle below this CPU use over one second, % of one core")
	fs.DurationVar(&o.SettleAfter, "settle-after", o.SettleAfter, "after the run, keep measuring the server's CPU and disk writes (--server-pid) until it is idle, at most this long; 0 = stop at the last reply")
	fs.StringVar(&o.FsyncProbeDir, "fsync-probe-dir", os.TempDir(), "directory (on the broker's disk) for the 4 KiB write+fdatasync probe run during the measured phase")
	fs.DurationVar(&o.FsyncProbeEvery, "fsync-probe-every", 50*time.Millisecond, "period of the fdatasync probe during the run, at least 1ms; 0 = no probe")
	fs.BoolVar(&o.RandomBody, "random-body", o.RandomBody, "random (incompressible) message bodies instead of constant ones")
	fs.StringVar(&o.CPUProfile, "cpu-profile", o.CPUProfile, "write the server's CPU profile of the measured phase here (needs --metrics-url of a popshim serve --pprof)")
	fs.StringVar(&o.Workload, "workload", o.Workload, "workload name of this run in a cost series (bench cost groups by it)")
	fs.StringVar(&o.Label, "label", o.Label, "name of this run in reports")
	fs.IntVar(&o.Round, "round", o.Round, "round number of this run in a series (bench compare pairs runs by it); 0 = none")
	fs.StringVar(&o.JSON, "json", o.JSON, "write the JSON report to this file ('-' = stdout)")
	fs.StringVar(&o.Plot, "plot", o.Plot, "write a latency-over-time plot (.svg or .png)")
	fs.BoolVar(&o.Quiet, "quiet", o.Quiet, "no per-interval lines")
	fs.BoolVar(&o.TLS, "tls", o.TLS, "connect with TLS; the server certificate is not verified (for test certificates)")
	if !withChange {
		fs.BoolVar(&o.Orderly, "orderly", o.Orderly, "pop mode: orderly (FIFO) POPs, order=true")
		fs.DurationVar(&o.TimerSpread, "timer-spread", o.TimerSpread, "timer mode: spread the --messages timers' due times evenly over this span and only measure the fill (e.g. 720h); 0 = all due at once")
		fs.DurationVar(&o.TimerSpreadStart, "timer-spread-start", time.Hour, "timer mode with --timer-spread: when the first timer is due, from the start")
	}
	fs.StringVar(&o.AccessKey, "access-key", o.AccessKey, "sign requests as this ACL user (AccessKey), for a broker with --auth-enabled")
	fs.StringVar(&o.SecretKey, "secret-key", os.Getenv("POPSHIM_BENCH_SECRET_KEY"), "SecretKey of --access-key (default $POPSHIM_BENCH_SECRET_KEY)")
	if withChange {
		fs.IntVar(&o.ChangeBurst, "change-burst", 2000, "CHANGE_MESSAGE_INVISIBLETIME requests per burst; 0 = none")
		fs.DurationVar(&o.ChangePeriod, "change-period", o.ChangePeriod, "time between CHANGE bursts")
		fs.IntVar(&o.ChangePool, "change-pool", 0, "receipt handles reserved for CHANGE; 0 = 2×burst")
	}
}

// serverPIDs returns the positive entries of o.ServerPIDs.
func (o *Options) serverPIDs() []int {
	var out []int
	for _, p := range o.ServerPIDs {
		if p > 0 {
			out = append(out, p)
		}
	}
	return out
}

// clientOptions are the remoting client options of every bench
// connection: the log, and TLS without certificate verification when
// o.TLS is set.
func (o *Options) clientOptions() client.Options {
	co := client.Options{Log: o.Log, BeforeRequest: o.beforeRequest()}
	if o.TLS {
		co.TLS = &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12} //nolint:gosec // --tls measures a test certificate
	}
	return co
}

// sign adds AccessKey and Signature to req when o.AccessKey is set
// (AclClientRPCHook), and returns req. Any goroutine.
func (o *Options) sign(req *codec.Command) *codec.Command {
	if o.AccessKey == "" {
		return req
	}
	client.SignRequest(req, o.AccessKey, o.SecretKey)
	return req
}

// beforeRequest is the client.Options.BeforeRequest of the bench
// clients: nil without credentials.
func (o *Options) beforeRequest() func(*codec.Command) {
	if o.AccessKey == "" {
		return nil
	}
	return func(req *codec.Command) { o.sign(req) }
}
