package broker

import "golang.org/x/sys/unix"

// physicalMemoryBytes is the machine's physical memory (sysinfo(2)
// totalram × mem_unit), or fallbackMemoryBytes when the call fails.
func physicalMemoryBytes() int64 {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil || si.Totalram == 0 {
		return fallbackMemoryBytes
	}
	return int64(si.Totalram) * int64(si.Unit)
}
