package popstore_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/popstore"
)

// cfOption returns option name of column family cf from the newest OPTIONS
// file RocksDB wrote into dir ("" when absent).
func cfOption(t *testing.T, dir, cf, name string) string {
	t.Helper()
	return sectionOption(t, dir, `[CFOptions "`+cf+`"]`, name)
}

// sectionOption returns option name of the OPTIONS file section (e.g.
// "[DBOptions]") from the newest OPTIONS file in dir ("" when absent).
func sectionOption(t *testing.T, dir, section, name string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "OPTIONS-*"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "RocksDB writes an OPTIONS file on open")
	sort.Strings(files) // OPTIONS-<number>, same width within one run
	b, err := os.ReadFile(files[len(files)-1])
	require.NoError(t, err)
	text := string(b)
	i := strings.Index(text, section)
	require.GreaterOrEqual(t, i, 0, "no section %s", section)
	text = text[i+len(section):]
	if j := strings.Index(text, "\n["); j >= 0 {
		text = text[:j]
	}
	m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(name) + `=(.*)$`).FindStringSubmatch(text)
	if m == nil {
		return ""
	}
	return strings.TrimSpace(m[1])
}

// The pop and offsets families are stored uncompressed and keep the
// memtable insert hint; messages keep RocksDB's default compression;
// flushes and compactions sync their output every MiB; RocksDB runs two
// flush and three compaction threads, and the index family four memtables.
func TestColumnFamilyOptionsInEffect(t *testing.T) {
	dir := t.TempDir()
	s, err := popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	require.NoError(t, s.Close())

	for _, cf := range []string{"pop", "offsets"} {
		require.Equal(t, "kNoCompression", cfOption(t, dir, cf, "compression"), cf)
		require.Contains(t, cfOption(t, dir, cf, "memtable_insert_with_hint_prefix_extractor"), "CappedPrefix", cf)
	}
	require.Equal(t, "kSnappyCompression", cfOption(t, dir, "messages", "compression"))
	require.Equal(t, "1048576", sectionOption(t, dir, "[DBOptions]", "bytes_per_sync"), "SST writeback in 1 MiB steps")
	require.Equal(t, "2", sectionOption(t, dir, "[DBOptions]", "max_background_flushes"), "two flush threads")
	require.Equal(t, "3", sectionOption(t, dir, "[DBOptions]", "max_background_compactions"), "three compaction threads")
	require.Equal(t, "4", cfOption(t, dir, "index", "max_write_buffer_number"), "four index memtables")
}

// Options.MessagesMemtableBytes is the messages family's write_buffer_size
// as RocksDB applies it; 0 keeps the default, and the other families keep
// theirs.
func TestMessagesMemtableBytes(t *testing.T) {
	dir := t.TempDir()
	s, err := popstore.Open(popstore.Options{Dir: dir, MessagesMemtableBytes: 16 << 20})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.Equal(t, "16777216", cfOption(t, dir, "messages", "write_buffer_size"))
	require.Equal(t, "67108864", cfOption(t, dir, "pop", "write_buffer_size"), "RocksDB's default for the other families")

	dir = t.TempDir()
	s, err = popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.Equal(t, fmt.Sprint(popstore.DefaultMessagesMemtableBytes), cfOption(t, dir, "messages", "write_buffer_size"))
}
