package bench

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"
)

// GRPCOptions are the settings of the v5 gRPC modes (RunGRPCSend,
// RunGRPCReceive) beyond the shared Options: there, Options.Addr is the
// gRPC endpoint (popshim's --grpc-listen or a rocketmq-proxy's
// grpcServerPort), Conns the HTTP/2 connections (one v5 client instance,
// one x-mq-client-id each), Inflight the calls in flight per connection,
// Messages the messages sent before a receive run, ProduceBatch the
// messages per SendMessage of that preparation, InvisibleTime the
// ReceiveMessage invisible_duration and TLS a TLS connection without
// certificate verification.
type GRPCOptions struct {
	// RemotingAddr, when set, is a broker's remoting address (host:port)
	// to which UPDATE_AND_CREATE_TOPIC (17) for Topic is sent before the
	// v5 handshake, with Options.Queues queues: rocketmq-proxy cannot
	// create topics, and a v5 client cannot either. Empty: the topic must
	// exist (or the endpoint must create it on QueryRoute). Dialled in
	// plaintext whatever Options.TLS says. --remoting-addr.
	RemotingAddr string
	// ReceiveBatch is ReceiveMessage's batch_size (the proxy clamps it to
	// 32). --batch-size, default 32.
	ReceiveBatch int
	// AckBatch is the most entries per AckMessage: the messages of one
	// receive are acked in ceil(n/AckBatch) AckMessage calls sent at
	// once. --ack-batch, default 32.
	AckBatch int
	// LongPolling is ReceiveMessage's long_polling_timeout; the call's
	// deadline is LongPolling + receiveSlack. The proxy clamps the poll
	// to [5 s, 20 s]. --long-polling, default 5s.
	LongPolling time.Duration
	// RouteWait bounds the wait, at start, for QueryRoute to answer OK
	// with at least one queue (a proxy learns a new topic's route from the
	// name server). --route-wait, default 30s.
	RouteWait time.Duration
}

// normalize fills zero GRPCOptions fields with their defaults.
func (g *GRPCOptions) normalize() {
	if g.ReceiveBatch == 0 {
		g.ReceiveBatch = 32
	}
	if g.AckBatch == 0 {
		g.AckBatch = 32
	}
	if g.LongPolling == 0 {
		g.LongPolling = 5 * time.Second
	}
	if g.RouteWait == 0 {
		g.RouteWait = 30 * time.Second
	}
}

// validate reports the first GRPCOptions field out of range.
func (g *GRPCOptions) validate() error {
	switch {
	case g.ReceiveBatch < 1 || g.ReceiveBatch > 1024:
		return fmt.Errorf("bench: --batch-size %d out of [1, 1024]", g.ReceiveBatch)
	case g.AckBatch < 1 || g.AckBatch > 1024:
		return fmt.Errorf("bench: --ack-batch %d out of [1, 1024]", g.AckBatch)
	case g.LongPolling < time.Second:
		return errors.New("bench: --long-polling must be at least 1s")
	case g.RouteWait <= 0:
		return errors.New("bench: --route-wait must be positive")
	}
	return nil
}

// BindGRPCFlags registers the flags of the gRPC modes on fs with o's
// values as defaults (call it on DefaultOptions()); receive adds the
// ReceiveMessage/AckMessage flags and the preparation's message count.
// Call from the goroutine that builds the command.
func (o *Options) BindGRPCFlags(fs *pflag.FlagSet, receive bool) {
	o.GRPC.normalize()
	fs.StringVar(&o.Addr, "addr", "127.0.0.1:8081", "v5 gRPC endpoint host:port (popshim --grpc-listen, or a rocketmq-proxy)")
	fs.StringVar(&o.GRPC.RemotingAddr, "remoting-addr", "", "broker remoting address (plaintext) to create the topic at (UPDATE_AND_CREATE_TOPIC) first; empty: the topic must exist")
	fs.StringVar(&o.Topic, "topic", o.Topic, "bench topic; empty: a fresh bench_<ms> per run")
	fs.IntVar(&o.Queues, "queues", o.Queues, "queues of the bench topic when --remoting-addr creates it")
	fs.IntVar(&o.Conns, "conns", 4, "HTTP/2 connections, one v5 client (x-mq-client-id) each")
	fs.IntVar(&o.Inflight, "inflight", 32, "calls in flight per connection")
	fs.DurationVar(&o.Duration, "duration", o.Duration, "length of the measured phase")
	fs.IntVar(&o.Rate, "rate", o.Rate, "target calls/s (send: SendMessage; receive: ReceiveMessage); 0 = open loop at max")
	fs.IntVar(&o.BodySize, "body-size", o.BodySize, "message body bytes")
	fs.DurationVar(&o.GRPC.RouteWait, "route-wait", o.GRPC.RouteWait, "how long QueryRoute may keep failing at start (a proxy learning a new topic)")
	fs.DurationVar(&o.Interval, "interval", o.Interval, "report line period")
	fs.StringVar(&o.MetricsURL, "metrics-url", o.MetricsURL, "server Prometheus endpoint, e.g. http://127.0.0.1:5557/metrics")
	fs.IntSliceVar(&o.ServerPIDs, "server-pid", o.ServerPIDs, "server pid, for its CPU time from /proc; repeat (or comma-separate) to sum several processes, e.g. a proxy and its broker")
	fs.StringVar(&o.Label, "label", o.Label, "name of this run in reports")
	fs.IntVar(&o.Round, "round", o.Round, "round number of this run in a series (bench compare pairs runs by it); 0 = none")
	fs.StringVar(&o.JSON, "json", o.JSON, "write the JSON report to this file ('-' = stdout)")
	fs.StringVar(&o.Plot, "plot", o.Plot, "write a latency-over-time plot (.svg or .png)")
	fs.BoolVar(&o.Quiet, "quiet", o.Quiet, "no per-interval lines")
	fs.BoolVar(&o.TLS, "tls", o.TLS, "connect with TLS; the server certificate is not verified (for test certificates)")
	if !receive {
		return
	}
	fs.StringVar(&o.Group, "group", o.Group, "consumer group; empty: a fresh bench_group_<ms> per run")
	fs.IntVar(&o.Messages, "messages", o.Messages, "messages sent (SendMessage) before the run, then received and acked")
	fs.IntVar(&o.ProduceBatch, "produce-batch", 16, "messages per SendMessage when preparing")
	fs.IntVar(&o.GRPC.ReceiveBatch, "batch-size", o.GRPC.ReceiveBatch, "ReceiveMessage batch_size")
	fs.IntVar(&o.GRPC.AckBatch, "ack-batch", o.GRPC.AckBatch, "most entries per AckMessage")
	fs.DurationVar(&o.GRPC.LongPolling, "long-polling", o.GRPC.LongPolling, "ReceiveMessage long_polling_timeout (the proxy clamps it to 5-20s)")
	fs.DurationVar(&o.InvisibleTime, "invisible-time", o.InvisibleTime, "ReceiveMessage invisible_duration (the proxy refuses < 10s)")
	fs.DurationVar(&o.SettleMax, "settle-max", 90*time.Second, "after preparing, wait up to this long for the server (--server-pid) to go idle before measuring; 0 = no wait")
	fs.Float64Var(&o.SettleCPU, "settle-cpu", 10, "the server counts as idle below this CPU use over one second, % of one core")
}
