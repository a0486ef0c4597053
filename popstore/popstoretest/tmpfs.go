//go:build linux

package popstoretest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Tmpfs mounts a tmpfs of sizeMiB MiB on a fresh directory under
// t.TempDir() and unmounts it (lazily) when the test ends. The test is
// skipped, saying why, where mounting is not allowed (not root, no
// CAP_SYS_ADMIN, a restricted container); CI runs as root.
func Tmpfs(t testing.TB, sizeMiB int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tmpfs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatalf("mkdir: %v", err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%dm", sizeMiB)); err != nil {
		t.Skipf("skipping disk-full test: cannot mount a %d MiB tmpfs on %s (needs root or CAP_SYS_ADMIN): %v", sizeMiB, dir, err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// Fill writes a ballast file in dir until the filesystem is full (ENOSPC)
// and returns its path; remove it to free the space again.
func Fill(t testing.TB, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "ballast")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatalf("ballast: %v", err)
	}
	defer func() { _ = f.Close() }() // ballast: only its size matters
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			t.Fatalf("ballast: %v", err)
		}
	}
	// Also take the last partial block.
	for _, n := range []int{4096, 512, 1} {
		for {
			if _, err := f.Write(buf[:n]); err != nil {
				break
			}
		}
	}
	return path
}
