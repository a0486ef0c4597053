// Package bench is the load generator behind `popshim bench`: it drives a
// RocketMQ-protocol broker (popshim or Apache RocketMQ) through the remoting
// client of package client (Conn) and reports throughput and latency.
//
// The main workload (RunAck) is the reason popshim exists: a steady stream
// of ACK_MESSAGE (200051) on real receipt handles while periodic bursts of
// CHANGE_MESSAGE_INVISIBLETIME (200053) arrive.
//
//	prepare   UPDATE_AND_CREATE_TOPIC ─ SEND_BATCH_MESSAGE ×N/ProduceBatch ─
//	          POP_MESSAGE (maxMsgNums 32, invisibleTime 300 s) until N
//	          receipt handles (extraInfo) are held
//	run       ACK stream: Conns×Inflight slots, each ACKs a distinct handle
//	          and re-issues on reply (open loop at max), or a pacer at --rate
//	          CHANGE bursts: every ChangePeriod, ChangeBurst CHANGEs at once
//	          on a separate handle pool; each reply's new handle goes back
//	report    every Interval and at the end: ops/s, HDR latency percentiles
//	          (ACK during bursts vs outside), SYSTEM_BUSY and errors, the
//	          server's fsyncs and batch sizes scraped from /metrics, and the
//	          CPU seconds of the bench and of the server
//
// Further modes: RunPop (pop+ack throughput), RunProduce (SEND_MESSAGE_V2),
// RunHeartbeat (HEART_BEAT round trips, the network limit), RunTimer
// (N timer messages due at the same instant: delivered/s from the due time
// and lateness percentiles, both read from /metrics), RunRawStorage
// (one large synced RocksDB WriteBatch, the storage limit, plus the disk's
// fdatasync latency), Compare (the side-by-side ratio table of several
// JSON reports) and CostSeries (the cost tables of make bench-cost).
//
// With --server-pid every network mode also reports the server's cost
// (CostStats: CPU µs per message from /proc/<pid>/stat and disk bytes
// written from /proc/<pid>/io, through --settle-after until the server is
// idle again), and a 4 KiB write+fdatasync probe runs beside the load
// (DiskStats; --fsync-probe-every), so ACK latency reads against the
// disk's own sync latency of that moment.
//
// The v5 gRPC modes drive apache.rocketmq.v2.MessagingService (popshim's
// own endpoint or a rocketmq-proxy) with grpc-go and the generated
// package of the Go v5 client, not its high-level client: RunGRPCSend
// (SendMessage) and RunGRPCReceive (the SimpleConsumer cycle,
// ReceiveMessage then AckMessage). Each connection is one v5 client that
// first does the start-up a real one does (QueryRoute, Telemetry with its
// Settings and the server's reply, Heartbeat, with the x-mq-* headers on
// every call) and says goodbye with NotifyClientTermination (grpc_conn.go).
// Their reports have the shape of the others; bench compare puts a gRPC
// mode beside its remoting counterpart (familyOf: grpc-send with produce,
// grpc-receive with pop), with the server's CPU per message, summed over
// every --server-pid (a proxy and the broker behind it). ServeGRPCFloor
// (`popshim bench grpc-floor-server`) is the reference for those numbers:
// grpc-go with popshim's endpoint's server options answering the same
// producer start-up and every SendMessage OK while storing nothing, so
// grpc-send against it measures grpc-go's own server CPU per call. It is
// never a broker.
//
// Latencies are recorded in microseconds into HdrHistograms (1 µs … 60 s,
// 3 significant digits) from the moment a request is queued on the client
// (or, with a target rate, from its scheduled send time, so a slow server
// cannot hide queueing: no coordinated omission) to the moment its reply is
// decoded. Only SUCCESS replies are recorded as latency; SYSTEM_BUSY and
// other codes are counted.
//
// The ACK stream is built to cost the shared CPU as little as possible per
// ACK, since every microsecond of it is taken from the server: its frames
// are encoded before the run (codec.AppendPreparedFrame) and copied with a
// fresh opaque; its replies are matched by opaque like every other and
// decoded head-only (client.Conn.InvokePreparedHead: code, opaque, flag,
// remark; no Command, no ext map and no allocation for the usual ACK reply
// shape); each slot reuses one
// in-flight record; and one clock reading per reply serves both as the end
// of that reply's latency and as the start of the slot's next request,
// which is queued right after it (open loop), before the reply is
// recorded. "ack" is recorded once per reply, in its "during burst" or
// "outside burst" part, and summed from the two when drained.
//
// The package is a benchmark, not a test: nothing here asserts a threshold.
// Every Run* function is called from one goroutine (the CLI's) and returns
// when the run has ended and every connection is closed.
package bench
