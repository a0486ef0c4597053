//go:build linux

package popstoretest

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// MappedRSS sums the Rss of this process's mappings of files under dir
// (/proc/self/smaps), bytes: the pages of those files the process has
// mapped in, such as the commit log's that reads touched.
func MappedRSS(t testing.TB, dir string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatalf("smaps: %v", err)
	}
	defer func() { _ = f.Close() }()
	var sum int64
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			in = len(fields) >= 6 && strings.HasPrefix(fields[5], dir) // a mapping's header line
			continue
		}
		if in && strings.HasPrefix(line, "Rss:") {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				t.Fatalf("smaps: %q: %v", line, err)
			}
			sum += kb << 10
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("smaps: %v", err)
	}
	return sum
}
