//go:build crash

package crash

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/popshim/popshim/codec"
)

// TestSIGTERMWhileWriterFailed: a broker whose writer failed on a full
// disk, stopped with SIGTERM, exits 0 (the refused writes were answered
// with errors, so the stop lost nothing) and logs why the writer was down;
// started again once space returned, it holds every acknowledged message.
// Before, it exited 1, and a service manager restarting on failure looped
// through starts the full disk refused.
func TestSIGTERMWhileWriterFailed(t *testing.T) {
	bin, mnt, dir, logDir, addr := fullDiskEnv(t)
	l := newLedger()

	b := start(t, bin, dir, logDir, addr, 1)
	c := dial(t, addr)
	c.createTopic()
	for range 20 {
		if code := c.send(l); code != codec.Success {
			t.Fatalf("SEND before the disk filled answered %d", code)
		}
	}
	ballast := fillUntilRefused(t, c, l, mnt, 3)

	if err := syscall.Kill(b.cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.exited:
	case <-time.After(waitFor):
		t.Fatalf("popshim did not stop within %s of SIGTERM\n%s", waitFor, b.tail())
	}
	if b.err != nil {
		t.Fatalf("SIGTERM while the writer was failed: %v, want exit 0\n%s", b.err, b.tail())
	}
	if logged, _ := os.ReadFile(b.log); !strings.Contains(string(logged), "stopped while the writer was failed") {
		t.Errorf("no log line names the failed writer at the stop\n%s", b.tail())
	}

	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	b = start(t, bin, dir, logDir, addr, 2)
	select {
	case <-b.exited:
		t.Fatalf("popshim does not start after space returned: %v\n%s", b.err, b.tail())
	default:
	}
	c = dial(t, addr)
	verify(t, c, l, "after the SIGTERM and a restart")
}
