package bench

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

// flagSets binds the flags of the ack mode, the other remoting modes and
// grpc-receive (the widest gRPC set) on fresh flag sets, each from
// DefaultOptions as the commands do.
func flagSets() map[string]*pflag.FlagSet {
	sets := map[string]*pflag.FlagSet{}
	for _, name := range []string{"ack", "produce", "grpc-receive"} {
		o := DefaultOptions()
		fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
		switch name {
		case "ack":
			o.BindFlags(fs, true)
		case "produce":
			o.BindFlags(fs, false)
		default:
			o.BindGRPCFlags(fs, true)
		}
		sets[name] = fs
	}
	return sets
}

// A 0 given on the command line where it means nothing is refused, naming
// the flag and its default, instead of silently becoming the default; a 0
// that means something (--rate, --keys, --settle-max …) is not.
func TestCheckFlagsRefusesMeaninglessZero(t *testing.T) {
	for mode, fs := range flagSets() {
		require.NoError(t, fs.Parse(nil))
		require.NoError(t, CheckFlags(fs), mode)
	}
	for _, tc := range []struct{ mode, arg, want string }{
		{"ack", "--conns=0", "bench: --conns must be at least 1, got 0 (default 16)"},
		{"ack", "--inflight=0", "--inflight must be at least 1, got 0"},
		{"ack", "--duration=0s", "--duration must be positive, got 0s (default 20s)"},
		{"ack", "--messages=0", "--messages must be at least 1"},
		{"ack", "--body-size=0", "--body-size must be at least 1"},
		{"ack", "--queues=0", "--queues must be at least 1"},
		{"ack", "--change-period=0", "--change-period must be positive"},
		{"ack", "--produce-batch=0", "--produce-batch must be at least 1"},
		{"ack", "--invisible-time=0", "--invisible-time must be at least 1s, got 0s (default 5m0s)"},
		{"ack", "--interval=0", "--interval must be positive"},
		{"ack", "--settle-cpu=0", "--settle-cpu must be above 0 (% of one core), got 0 (default 10)"},
		{"ack", "--settle-cpu=-5", "--settle-cpu must be above 0"},
		{"grpc-receive", "--settle-cpu=0", "--settle-cpu must be above 0"},
		{"produce", "--conns=0", "--conns must be at least 1"},
		{"grpc-receive", "--conns=0", "--conns must be at least 1, got 0 (default 4)"},
		{"grpc-receive", "--batch-size=0", "--batch-size must be at least 1"},
		{"grpc-receive", "--long-polling=0s", "--long-polling must be at least 1s"},
	} {
		fs := flagSets()[tc.mode]
		require.NoError(t, fs.Parse([]string{tc.arg}))
		require.ErrorContains(t, CheckFlags(fs), tc.want, tc.mode+" "+tc.arg)
	}
	for _, arg := range []string{"--rate=0", "--keys=0", "--change-burst=0", "--change-pool=0", "--settle-max=0", "--settle-after=0", "--fsync-probe-every=0", "--round=0"} {
		fs := flagSets()["ack"]
		require.NoError(t, fs.Parse([]string{arg}))
		require.NoError(t, CheckFlags(fs), arg)
	}
}

// A flag only one mode reads is refused on the others, naming the mode
// that reads it, and accepted on that mode.
func TestCheckModeFlagsRefusesOtherModesFlags(t *testing.T) {
	for _, tc := range []struct{ mode, arg, want string }{
		{"produce", "--orderly", "bench produce: --orderly applies to bench pop only"},
		{"produce", "--timer-spread=1h", "bench produce: --timer-spread applies to bench timer only"},
		{"produce", "--timer-spread-start=2h", "bench produce: --timer-spread-start applies to bench timer only"},
		{"ack", "--keys=2", "bench ack: --keys applies to bench produce only"},
	} {
		fs := flagSets()[tc.mode]
		require.NoError(t, fs.Parse([]string{tc.arg}))
		require.EqualError(t, CheckModeFlags(fs, tc.mode), tc.want, tc.mode+" "+tc.arg)
	}
	for _, tc := range []struct{ mode, arg string }{
		{"pop", "--orderly"}, {"timer", "--timer-spread=1h"}, {"produce", "--keys=2"}, {"produce", "--conns=4"},
	} {
		fs := flagSets()["produce"] // the remoting modes bind one flag set
		require.NoError(t, fs.Parse([]string{tc.arg}))
		require.NoError(t, CheckModeFlags(fs, tc.mode), tc.mode+" "+tc.arg)
	}
}

// missingPID is a pid no process has: the kernel hands out pids below
// /proc/sys/kernel/pid_max only.
func missingPID(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/kernel/pid_max")
	require.NoError(t, err)
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	return n
}

// Validate refuses a negative or sub-millisecond probe period, negative
// settle bounds, a --server-pid with no process and, with the probe on, a
// probe directory that is missing or not a directory.
func TestValidateProbeSettleAndPIDs(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	gone := missingPID(t)
	missing := filepath.Join(dir, "missing")
	probeIn := func(d string) func(*Options) {
		return func(o *Options) { o.FsyncProbeEvery, o.FsyncProbeDir = time.Millisecond, d }
	}
	for _, tc := range []struct {
		set  func(*Options)
		want string
	}{
		{func(o *Options) { o.FsyncProbeEvery = -time.Second }, "--fsync-probe-every must be 0 (no probe) or at least 1ms, got -1s"},
		{func(o *Options) { o.FsyncProbeEvery = time.Nanosecond }, "--fsync-probe-every 1ns is below 1ms"},
		{func(o *Options) { o.SettleMax = -time.Second }, "--settle-max must be ≥ 0 (0 = no wait), got -1s"},
		{func(o *Options) { o.SettleAfter = -time.Second }, "--settle-after must be ≥ 0"},
		{func(o *Options) { o.ServerPIDs = []int{os.Getpid(), gone} }, "--server-pid " + strconv.Itoa(gone) + ": no such process"},
		{func(o *Options) { o.ServerPIDs = []int{0} }, "--server-pid 0: no such process"},
		{probeIn(missing), `--fsync-probe-dir "` + missing + `" is not a writable directory: no such file or directory`},
		{probeIn(file), `--fsync-probe-dir "` + file + `" is not a writable directory: not a directory`},
	} {
		o := DefaultOptions()
		tc.set(&o)
		require.ErrorContains(t, o.Validate(), tc.want)
	}
	o := DefaultOptions()
	o.FsyncProbeEvery, o.FsyncProbeDir, o.ServerPIDs = time.Millisecond, dir, []int{os.Getpid()}
	o.SettleMax = 0
	require.NoError(t, o.Validate())
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, left, 1, "the writability check leaves nothing behind")
	o.FsyncProbeDir, o.FsyncProbeEvery = missing, 0
	require.NoError(t, o.Validate(), "the directory is not needed without the probe")
}

// A run with a missing probe directory fails before it dials: the error
// is the directory's, not the unreachable address's.
func TestRunFailsAtStartOnMissingProbeDir(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	_, err := RunProduce(context.Background(), Options{Addr: "127.0.0.1:1", FsyncProbeEvery: 50 * time.Millisecond, FsyncProbeDir: missing})
	require.ErrorContains(t, err, "--fsync-probe-dir")
	_, err = RunProduce(context.Background(), Options{Addr: "127.0.0.1:1", ServerPIDs: []int{missingPID(t)}})
	require.ErrorContains(t, err, "--server-pid")
}
