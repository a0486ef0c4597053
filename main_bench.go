package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/popshim/popshim/bench"
	"github.com/popshim/popshim/conf"
)

// benchCommand wires `popshim bench` (the ACK/CHANGE workload) and its
// modes to package bench; flags are bound there.
func benchCommand() *cobra.Command {
	o := bench.DefaultOptions()
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Load a broker with ACKs and CHANGE_MESSAGE_INVISIBLETIME bursts and report throughput and latency",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBench(cmd, "ack", &o, bench.RunAck)
		},
	}
	o.BindFlags(cmd.Flags(), true)
	cmd.AddCommand(
		benchMode("pop", "Pop+ack throughput: one POP in flight per queue, every message ACKed", bench.RunPop),
		benchMode("produce", "SEND_MESSAGE_V2 throughput", bench.RunProduce),
		benchMode("txn", "Transactional produce: half SEND then END_TRANSACTION commit per message, and the time from the commit to a PULL long poll seeing the message", bench.RunTxn),
		benchMode("timer", "Timer delivery: N TIMER_DELIVER_MS messages due at once, drain rate and lateness (needs --metrics-url); --rate R adds a concurrent ACK stream, its latency during and outside the drain", bench.RunTimer),
		benchMode("heartbeat", "HEART_BEAT round trips: the network limit", bench.RunHeartbeat),
		benchGRPCMode("grpc-send", "v5 gRPC SendMessage throughput against a gRPC endpoint (popshim --grpc-listen or rocketmq-proxy)", false, bench.RunGRPCSend),
		benchGRPCMode("grpc-receive", "v5 gRPC SimpleConsumer cycle: ReceiveMessage then AckMessage of what came, after sending --messages", true, bench.RunGRPCReceive),
		benchGRPCFloorServer(), benchRawStorage(), benchCompare(), benchCost(), benchPlot(), benchCurve())
	return cmd
}

func benchMode(name, short string, run func(context.Context, bench.Options) (*bench.Report, error)) *cobra.Command {
	o := bench.DefaultOptions()
	cmd := &cobra.Command{
		Use: name, Short: short, Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBench(cmd, name, &o, run) },
	}
	o.BindFlags(cmd.Flags(), false)
	return cmd
}

// benchGRPCMode is a v5 gRPC mode: the flags of bench.Options.BindGRPCFlags.
func benchGRPCMode(name, short string, receive bool, run func(context.Context, bench.Options) (*bench.Report, error)) *cobra.Command {
	o := bench.DefaultOptions()
	cmd := &cobra.Command{
		Use: name, Short: short, Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBench(cmd, name, &o, run) },
	}
	o.BindGRPCFlags(cmd.Flags(), receive)
	return cmd
}

// runBench runs network mode mode with the options its flags filled,
// after refusing an explicit 0 where the flag needs a value
// (bench.CheckFlags) and a flag another mode reads (bench.CheckModeFlags).
func runBench(cmd *cobra.Command, mode string, o *bench.Options, run func(context.Context, bench.Options) (*bench.Report, error)) error {
	if err := bench.CheckFlags(cmd.Flags()); err != nil {
		return err
	}
	if err := bench.CheckModeFlags(cmd.Flags(), mode); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	logCfg := conf.Default()
	logCfg.LogFormat = "console" // colour only on a terminal, as for serve
	log := logCfg.NewLogger(os.Stderr)
	o.Log, o.Out = &log, cmd.OutOrStdout()
	if o.JSON == "-" {
		o.Out = cmd.ErrOrStderr()
	}
	_, err := run(ctx, *o)
	if ctx.Err() != nil && cmd.Context().Err() == nil { // a signal ended the run
		return errInterrupted
	}
	return err
}

// benchGRPCFloorServer is `popshim bench grpc-floor-server`: grpc-go
// alone answering a v5 producer (bench.ServeGRPCFloor), the reference
// beside popshim's endpoint for grpc-go's own server CPU per call. It
// stores nothing and is not a broker. Runs until SIGINT or SIGTERM.
func benchGRPCFloorServer() *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use: "grpc-floor-server",
		Short: "Serve a v5 gRPC MessagingService that answers QueryRoute, Telemetry, Heartbeat and SendMessage OK and stores nothing: " +
			"grpc-go's own per-call CPU, to measure with grpc-send --server-pid (not a broker)",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			lis, err := net.Listen("tcp", listen)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "grpc-floor-server: listening on %s (stores nothing; SIGINT or SIGTERM stops it)\n", lis.Addr())
			return bench.ServeGRPCFloor(ctx, lis)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8082", "host:port to serve on (port 0: any free port, printed at start)")
	return cmd
}

func benchRawStorage() *cobra.Command {
	var o bench.StorageOptions
	cmd := &cobra.Command{
		Use: "raw-storage", Short: "Storage limit: synced RocksDB WriteBatches, single synced writes and fdatasync latency",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Out = cmd.OutOrStdout()
			_, err := bench.RunRawStorage(cmd.Context(), o)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Dir, "data-dir", os.TempDir(), "directory for the temporary RocksDB and probe file (use the broker's disk)")
	f.IntVar(&o.BatchOps, "batch-ops", 4096, "mutations per synced WriteBatch")
	f.DurationVar(&o.Duration, "duration", 5*time.Second, "length of the WriteBatch loop")
	f.IntVar(&o.FsyncSamples, "fsync-samples", 200, "single synced writes and write+fdatasync probes")
	f.StringVar(&o.Label, "label", "raw-storage", "name of this run in reports")
	f.StringVar(&o.JSON, "json", "", "write the JSON report to this file ('-' = stdout)")
	return cmd
}

func benchCompare() *cobra.Command {
	return &cobra.Command{
		Use: "compare REPORT.json...", Short: "Print the side-by-side Markdown table and ratios of bench JSON reports (first ack run vs the others)",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rs, err := bench.ReadReports(args)
			if err != nil {
				return err
			}
			bench.Compare(rs).WriteMarkdown(cmd.OutOrStdout())
			return nil
		},
	}
}

func benchCost() *cobra.Command {
	var anchor string
	cmd := &cobra.Command{
		Use: "cost REPORT.json...", Short: "Print the cost tables of a cost series (make bench-cost): server CPU µs per message, disk bytes per payload byte, ACK latency against the disk",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rs, err := bench.ReadReports(args)
			if err != nil {
				return err
			}
			bench.NewCostSeries(rs, anchor).WriteMarkdown(cmd.OutOrStdout())
			return nil
		},
	}
	cmd.Flags().StringVar(&anchor, "anchor", "", "label the others are divided by; empty: the first label starting with rocketmq")
	return cmd
}

func benchPlot() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use: "plot REPORT.json...", Short: "Plot latency over time of one or several bench JSON reports (.svg or .png)",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rs, err := bench.ReadReports(args)
			if err != nil {
				return err
			}
			return bench.WritePlot(out, rs)
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "bench-latency.svg", "output file; the extension picks the format")
	return cmd
}

func benchCurve() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use: "curve REPORT.json...", Short: "Latency against offered load: plot ACK p50 and p99 during CHANGE bursts of ack reports run at several --rate values, and print the Markdown table",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rs, err := bench.ReadReports(args)
			if err != nil {
				return err
			}
			pts := bench.CurvePoints(rs)
			bench.WriteCurveTable(cmd.OutOrStdout(), pts)
			return bench.WriteCurve(out, pts)
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "bench-curve.svg", "output file; the extension picks the format")
	return cmd
}
