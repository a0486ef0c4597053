//go:build linux && amd64

package popstore

// Exported for the external tests of crc32c_linux_amd64.go.
var (
	CRC32CExtend   = crc32cExtend
	CRC32CLibrary  = crc32cLibrary
	CRC32CPortable = crc32cPortable
)
