package popstore

// The data directory's WAL files (*.log): their sizes and the blocks the
// filesystem holds allocated for them, for the room check before an open
// (reopen_room.go).

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/rs/zerolog"
)

// walFile is one WAL file: its name in the directory, its size and the
// bytes allocated for it (st_blocks × 512, which counts the preallocation
// past its end), bytes.
type walFile struct {
	name        string
	size, alloc uint64
}

// walFiles lists dir's WAL files; a file that vanishes meanwhile is left
// out. Errors: the directory's read error.
func walFiles(dir string) ([]walFile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("popstore: %w", err)
	}
	var out []walFile
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".log") {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		f := walFile{name: e.Name(), size: uint64(fi.Size())}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			f.alloc = uint64(st.Blocks) * 512
		}
		out = append(out, f)
	}
	return out, nil
}

// walSpace sums the sizes of the WAL files in dir, and the disk space
// allocated past their ends: RocksDB preallocates a WAL (fallocate, about
// 1.1 × the largest write buffer, at most max_total_wal_size) and gives
// the unused part back when it closes the file, as Reopen's close does,
// so that space is free for the replay's flush.
func walSpace(dir string) (wal, prealloc uint64, err error) {
	files, err := walFiles(dir)
	if err != nil {
		return 0, 0, err
	}
	for _, f := range files {
		wal += f.size
		if f.alloc > f.size {
			prealloc += f.alloc - f.size
		}
	}
	return wal, prealloc, nil
}

// walSignature names dir's WAL files with their sizes ("" when none).
func walSignature(dir string) (string, error) {
	files, err := walFiles(dir)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, "%s:%d;", f.name, f.size)
	}
	return b.String(), nil
}

// releaseWALTails gives back the blocks RocksDB preallocated past the end
// of each WAL file (fallocate with KEEP_SIZE) by truncating the file to
// its own size: nothing is stored past the end, and a killed process
// leaves them allocated (42 MB of a 43-byte WAL on a 64 MB filesystem
// kept a broker from starting). Best effort, logged.
// REQUIRES: the database is not open.
func releaseWALTails(dir string, log zerolog.Logger) {
	files, err := walFiles(dir)
	if err != nil {
		return
	}
	for _, f := range files {
		if f.alloc <= f.size+4096 { // at most the last block's slack
			continue
		}
		path := filepath.Join(dir, f.name)
		if err := os.Truncate(path, int64(f.size)); err != nil {
			log.Warn().Err(err).Str("file", path).Msg("could not give back the WAL's preallocated blocks")
			continue
		}
		log.Info().Str("file", path).Uint64("bytes", f.alloc-f.size).Msg("gave back the WAL's preallocated blocks")
	}
}
