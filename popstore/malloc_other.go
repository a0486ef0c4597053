//go:build !linux

package popstore

// tuneMalloc does nothing outside Linux: the mmap threshold it fixes is
// glibc's (malloc_linux.go).
func tuneMalloc() {}
