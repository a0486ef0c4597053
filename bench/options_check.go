package bench

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/pflag"
)

// minFsyncProbeEvery is the shortest --fsync-probe-every: at 1ns the probe
// ran about 3,450 write+fdatasyncs per second, a load of its own on the
// disk it is meant to observe.
const minFsyncProbeEvery = time.Millisecond

// zeroRejected are the flags whose 0 the Options would take as "the
// default" (Normalize) although 0 means nothing for them; given
// explicitly on the command line it is an error instead, with what the
// flag needs.
var zeroRejected = []struct{ name, want string }{
	{"queues", "at least 1"},
	{"conns", "at least 1"},
	{"inflight", "at least 1"},
	{"duration", "positive"},
	{"messages", "at least 1"},
	{"produce-batch", "at least 1"},
	{"body-size", "at least 1"},
	{"invisible-time", "at least 1s"},
	{"change-period", "positive"},
	{"interval", "positive"},
	{"batch-size", "at least 1"},
	{"ack-batch", "at least 1"},
	{"long-polling", "at least 1s"},
	{"route-wait", "positive"},
}

// CheckFlags reports a flag of fs (bound by BindFlags or BindGRPCFlags)
// set explicitly to 0 where 0 means nothing (a 0 there would otherwise
// silently become the default), e.g. "bench: --conns must be at least 1,
// got 0 (default 16)". Call it after parsing, before a Run function.
func CheckFlags(fs *pflag.FlagSet) error {
	for _, z := range zeroRejected {
		f := fs.Lookup(z.name)
		if f == nil || !f.Changed {
			continue
		}
		if v := f.Value.String(); v == "0" || v == "0s" {
			return fmt.Errorf("bench: --%s must be %s, got %s (default %s)", z.name, z.want, v, f.DefValue)
		}
	}
	// --settle-cpu ≤ 0 would otherwise silently become the default too.
	if f := fs.Lookup("settle-cpu"); f != nil && f.Changed {
		if v, err := strconv.ParseFloat(f.Value.String(), 64); err == nil && v <= 0 {
			return fmt.Errorf("bench: --settle-cpu must be above 0 (%% of one core), got %s (default %s)", f.Value.String(), f.DefValue)
		}
	}
	return nil
}

// checkRun reports the settings Validate checks beyond ranges: the
// fsync probe's period, the settle bounds, that every ServerPIDs process
// exists (/proc/<pid>), and, with the probe on, that FsyncProbeDir is a
// directory the bench can create its probe directory in.
func (o *Options) checkRun() error {
	switch {
	case o.FsyncProbeEvery < 0:
		return fmt.Errorf("bench: --fsync-probe-every must be 0 (no probe) or at least %s, got %s", minFsyncProbeEvery, o.FsyncProbeEvery)
	case o.FsyncProbeEvery > 0 && o.FsyncProbeEvery < minFsyncProbeEvery:
		return fmt.Errorf("bench: --fsync-probe-every %s is below %s (the probe would load the disk it measures); 0 = no probe", o.FsyncProbeEvery, minFsyncProbeEvery)
	case o.SettleMax < 0:
		return fmt.Errorf("bench: --settle-max must be ≥ 0 (0 = no wait), got %s", o.SettleMax)
	case o.SettleAfter < 0:
		return fmt.Errorf("bench: --settle-after must be ≥ 0 (0 = stop at the last reply), got %s", o.SettleAfter)
	}
	for _, pid := range o.ServerPIDs {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); pid <= 0 || err != nil {
			return fmt.Errorf("bench: --server-pid %d: no such process (/proc/%d)", pid, pid)
		}
	}
	if o.FsyncProbeEvery > 0 {
		return probeDirWritable(o.FsyncProbeDir)
	}
	return nil
}

// probeDirWritable creates and removes a directory under dir, as the
// fsync probe does at the start of the measured phase, so a missing or
// read-only --fsync-probe-dir fails before the run instead of losing the
// disk line after it.
func probeDirWritable(dir string) error {
	d, err := os.MkdirTemp(dir, "popshim-fsyncprobe-check-")
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err // "no such file or directory", not the probe directory's random name
		}
		return fmt.Errorf("bench: --fsync-probe-dir %q is not a writable directory: %w", dir, err)
	}
	return os.Remove(d)
}

// modeOnly names the flags that only one `popshim bench` mode reads, and
// that mode; the others bind them too (one flag set for all) and would
// ignore them silently.
var modeOnly = []struct{ flag, mode string }{
	{"orderly", "pop"},
	{"keys", "produce"},
	{"timer-spread", "timer"},
	{"timer-spread-start", "timer"},
}

// CheckModeFlags reports a flag of fs set explicitly on a mode that does
// not read it, e.g. "bench produce: --orderly applies to bench pop only".
// mode is the subcommand's name ("ack" for `popshim bench` itself). Call it
// after parsing, before a Run function.
func CheckModeFlags(fs *pflag.FlagSet, mode string) error {
	for _, m := range modeOnly {
		if f := fs.Lookup(m.flag); f != nil && f.Changed && mode != m.mode {
			return fmt.Errorf("bench %s: --%s applies to bench %s only", mode, m.flag, m.mode)
		}
	}
	return nil
}
