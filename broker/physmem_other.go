//go:build !linux

package broker

// physicalMemoryBytes is fallbackMemoryBytes off Linux (popshim is served
// on Linux; this keeps other builds working).
func physicalMemoryBytes() int64 { return fallbackMemoryBytes }
