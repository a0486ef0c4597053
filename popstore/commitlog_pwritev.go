package popstore

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// pwritevAll writes iov at off in f, continuing after short writes and
// EINTR. iov's slices are consumed (resliced) as they are written.
func pwritevAll(f *os.File, iov [][]byte, off int64) error {
	fd := int(f.Fd())
	for len(iov) > 0 {
		n, err := unix.Pwritev(fd, iov, off)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return io.ErrShortWrite
		}
		off += int64(n)
		for n > 0 {
			if n < len(iov[0]) {
				iov[0] = iov[0][n:]
				break
			}
			n -= len(iov[0])
			iov = iov[1:]
		}
		for len(iov) > 0 && len(iov[0]) == 0 {
			iov = iov[1:]
		}
	}
	return nil
}
