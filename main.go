// Command popshim is a RocketMQ-compatible broker for the POP consumption
// path. This file only wires commands: configuration lives in conf/, the
// server in stack.Serve.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/stack"
)

// version is stamped by the Makefile: -ldflags "-X main.version=<git describe>".
var version = "dev"

// commands are the subcommands of the root command, in help order. To add
// one (e.g. bench), write a constructor in its own file of package main and
// list it here.
var commands = []func() *cobra.Command{
	serveCommand,
	versionCommand,
	benchCommand,
	sendCommand,
	consumeCommand,
}

func main() {
	if err := newRoot().ExecuteContext(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "popshim:", err)
		var ec exitCodeError
		if errors.As(err, &ec) {
			os.Exit(ec.code)
		}
		os.Exit(1)
	}
}

// newRoot returns the popshim command with every subcommand.
func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "popshim",
		Short:         "RocketMQ remoting broker for the POP path: group-commit ACKs on RocksDB",
		SilenceUsage:  true,
		SilenceErrors: true,
		// --version prints what `popshim version` prints.
		Version: versionString(),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	for _, mk := range commands {
		root.AddCommand(mk())
	}
	return root
}

// exitCodeError makes the process exit with code instead of 1.
type exitCodeError struct {
	code int
	err  error
}

func (e exitCodeError) Error() string { return e.err.Error() }
func (e exitCodeError) Unwrap() error { return e.err }

// errInterrupted is a bench run's error when SIGINT or SIGTERM ended it:
// the process exits 130, as a shell reports a command that SIGINT ended,
// so a script running benches in a row stops too (its own INT trap does
// not run when the bench handles the signal and exits normally).
var errInterrupted = exitCodeError{code: 130, err: errors.New("interrupted (the report above covers the run until then)")}

// serveCommand runs the broker until SIGINT or SIGTERM.
func serveCommand() *cobra.Command {
	cfg := conf.Default()
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the broker (and the embedded name server)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cfg.Load(cmd.Flags(), os.LookupEnv); err != nil {
				return err
			}
			log := cfg.NewLogger(os.Stderr)
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			log.Info().Str("version", version).Msg("popshim starting")
			return stack.Serve(ctx, cfg, log)
		},
	}
	cfg.BindFlags(cmd.Flags())
	return cmd
}

// versionString is the version line: popshim <version> (<go> <os>/<arch>).
func versionString() string {
	return fmt.Sprintf("popshim %s (%s %s/%s)", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the popshim version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), versionString())
		},
	}
}
