//go:build crash

package crash

// The popshim process of the crash tests: started on a tmpfs data
// directory, killed or stopped, its log tail; and the full disk they share.

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore/popstoretest"
)

// broker is one `popshim serve` process on the tmpfs data directory.
type broker struct {
	cmd    *exec.Cmd
	addr   string
	log    string
	exited chan struct{}
	err    error // Wait's result, once exited is closed
}

// start runs popshim on dir, logging to logDir (not on the tmpfs, which
// fills up), and waits until it listens (on the broker port and, when
// extra names one, the gRPC port) or exits. A broker
// that exits during start-up is returned with exited closed. extra flags
// follow the defaults (a repeated flag's last value wins).
func start(t *testing.T, bin, dir, logDir, addr string, n int, extra ...string) *broker {
	t.Helper()
	b := &broker{addr: addr, log: filepath.Join(logDir, fmt.Sprintf("popshim-%d.log", n)), exited: make(chan struct{})}
	logf, err := os.Create(b.log)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"serve",
		"--listen", addr, "--broker-ip", "127.0.0.1",
		"--namesrv-listen=", "--metrics-listen=", "--grpc-listen=",
		"--data-dir", dir,
		"--writer-probe-interval", "100ms",
		"--disk-space-warning-level-ratio", "0", // the synced write itself must fail
		"--disk-space-clean-forcibly-ratio", "0", // and nothing acknowledged may be deleted
		"--revive-interval", "100ms",
		"--log-format", "console"}
	b.cmd = exec.Command(bin, append(args, extra...)...)
	b.cmd.Stdout, b.cmd.Stderr = logf, logf
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := b.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	go func() {
		b.err = b.cmd.Wait()
		_ = logf.Close()
		close(b.exited)
	}()
	t.Cleanup(func() { b.kill(t) })
	// The gRPC endpoint is bound after the broker port: wait for both.
	addrs := []string{addr}
	for i := 0; i+1 < len(extra); i++ {
		if extra[i] == "--grpc-listen" && extra[i+1] != "" {
			addrs = append(addrs, extra[i+1])
		}
	}
	deadline := time.Now().Add(waitFor)
	for len(addrs) > 0 {
		select {
		case <-b.exited:
			return b
		default:
		}
		if c, err := net.DialTimeout("tcp", addrs[0], 200*time.Millisecond); err == nil {
			_ = c.Close()
			addrs = addrs[1:]
			continue
		}
		if time.Now().After(deadline) {
			t.Fatalf("popshim not listening on %s after %s\n%s", addrs[0], waitFor, b.tail())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return b
}

// kill sends SIGKILL to the process group and reaps it; it fails the test
// if the process had died of a signal other than SIGKILL (an abort).
func (b *broker) kill(t *testing.T) {
	t.Helper()
	select {
	case <-b.exited:
	default:
		_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
		<-b.exited
		return
	}
	b.checkNoAbort(t)
}

// checkNoAbort fails the test if the process died of a signal it was not
// sent (SIGABRT from a RocksDB assertion, SIGSEGV).
func (b *broker) checkNoAbort(t *testing.T) {
	t.Helper()
	var ee *exec.ExitError
	if errors.As(b.err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() != syscall.SIGKILL {
			t.Errorf("popshim died of %v\n%s", ws.Signal(), b.tail())
		}
	}
}

func (b *broker) tail() string {
	data, err := os.ReadFile(b.log)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	return "popshim log tail (" + b.log + "):\n" + strings.Join(lines, "\n")
}

// fullDiskEnv skips the test unless POPSHIM_BIN names a binary, and
// returns it with a 64 MiB tmpfs mount, the data directory on it, a log
// directory off it (which must not fill up) and a free broker address.
func fullDiskEnv(t *testing.T) (bin, mnt, dir, logDir, addr string) {
	t.Helper()
	bin = os.Getenv("POPSHIM_BIN")
	if bin == "" {
		t.Skip("skipping: POPSHIM_BIN is not set (make crash builds bin/popshim and sets it)")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("skipping: popshim binary %s: %v", bin, err)
	}
	mnt = popstoretest.Tmpfs(t, 64)
	return bin, mnt, filepath.Join(mnt, "data"), t.TempDir(), freeAddr(t)
}

// fillUntilRefused fills mnt and sends until refused SENDs have answered
// SERVICE_NOT_AVAILABLE (at most 500 SENDs); it returns the ballast file.
func fillUntilRefused(t *testing.T, c *crashClient, l *ledger, mnt string, refused int) string {
	t.Helper()
	ballast := popstoretest.Fill(t, mnt)
	for k, n := 0, 0; n < refused; k++ {
		if k == 500 {
			t.Fatalf("no SEND refused after 500 on a full disk; answers %v", l.answers)
		}
		if c.send(l) == codec.ServiceNotAvailable {
			n++
		}
	}
	return ballast
}
