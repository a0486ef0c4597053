package grpcserver

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/adler32"
	"hash/crc32"
	"io"
)

// Body encodings. A remoting producer compresses large bodies itself and
// marks the record with SysFlagCompressed; the compression type in sysFlag
// bits 8–10 is ZLIB (0 or 3, what the Java and Go remoting clients write),
// LZ4 or ZSTD (Java clients with rocketmq.message.compressType). v5
// consumers know two encodings, IDENTITY and GZIP, and decode "GZIP"
// differently: Java by magic number (gzip, zlib, LZ4, ZSTD), Go and Python
// gzip or zlib, Node gzip only (zlib.gunzipSync). The proxy labels every
// compressed record GZIP and passes the zlib bytes through, which Node
// cannot read. popshim re-frames a zlib body as gzip instead: the deflate
// data is kept byte for byte, only the 2-byte zlib header and Adler-32
// trailer are replaced by the gzip header and CRC-32/length trailer, so
// every v5 client inflates it and nothing is compressed again. Bodies that
// are not a single well-formed zlib stream, and LZ4/ZSTD bodies, go out
// unchanged labelled GZIP, as the proxy sends them.
//
// The other way, a v5 producer's GZIP body (no shipped client sends one
// today) is stored as a zlib stream with the compressed bit, which is what
// remoting consumers inflate; it is decompressed and compressed again
// because that path is rare.

// gzipHeader is a minimal gzip member header (RFC 1952): magic, CM=8
// (deflate), no flags, MTIME 0, XFL 0, OS 255 (unknown).
var gzipHeader = [10]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}

// errNotZlib: the body is not one complete zlib stream that zlibToGzip can
// re-frame.
var errNotZlib = errors.New("not a single zlib stream")

// zlibToGzip re-frames the zlib stream z (RFC 1950) as a gzip member
// holding the same deflate data. It inflates z once to compute the CRC-32
// and length (nothing is kept), and refuses with an error when z has a
// preset dictionary, fails to inflate, inflates to more than maxInflated
// bytes (maxInflated ≤ 0: no bound), has a wrong Adler-32, or has bytes after
// the trailer. Any goroutine.
func zlibToGzip(z []byte, maxInflated int) ([]byte, error) {
	if len(z) < 2+2+4 {
		return nil, fmt.Errorf("%w: %d bytes", errNotZlib, len(z))
	}
	cmf, flg := z[0], z[1]
	if cmf&0x0f != 8 || cmf>>4 > 7 || (uint16(cmf)<<8|uint16(flg))%31 != 0 {
		return nil, fmt.Errorf("%w: header %#02x %#02x", errNotZlib, cmf, flg)
	}
	if flg&0x20 != 0 {
		return nil, fmt.Errorf("%w: preset dictionary", errNotZlib)
	}
	// bytes.Reader is an io.ByteReader, so flate reads exactly the deflate
	// data and r.Len() afterwards is what follows it.
	r := bytes.NewReader(z[2:])
	fr := flate.NewReader(r)
	crc, adl := crc32.NewIEEE(), adler32.New()
	var src io.Reader = fr
	if maxInflated > 0 {
		src = io.LimitReader(fr, int64(maxInflated)+1)
	}
	n, err := io.Copy(io.MultiWriter(crc, adl), src)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNotZlib, err)
	}
	if maxInflated > 0 && n > int64(maxInflated) {
		return nil, fmt.Errorf("%w: inflates to more than %d bytes", errNotZlib, maxInflated)
	}
	// The stream must have ended by itself, not at the limit.
	if _, err := fr.Read(make([]byte, 1)); err != io.EOF {
		return nil, fmt.Errorf("%w: deflate data does not end", errNotZlib)
	}
	deflateLen := len(z) - 2 - r.Len()
	tail := z[2+deflateLen:]
	if len(tail) != 4 || binary.BigEndian.Uint32(tail) != adl.Sum32() {
		return nil, fmt.Errorf("%w: bad Adler-32 trailer (%d bytes after the deflate data)", errNotZlib, len(tail))
	}
	out := make([]byte, 0, len(gzipHeader)+deflateLen+8)
	out = append(out, gzipHeader[:]...)
	out = append(out, z[2:2+deflateLen]...)
	out = binary.LittleEndian.AppendUint32(out, crc.Sum32())
	return binary.LittleEndian.AppendUint32(out, uint32(n)), nil
}

// gzipToZlib inflates the gzip data g (one or more members) and compresses
// it again as one zlib stream. More than maxInflated inflated bytes
// (maxInflated ≤ 0: no bound) or data that does not inflate is an error.
// Any goroutine.
func gzipToZlib(g []byte, maxInflated int) ([]byte, error) {
	gr, err := gzip.NewReader(bytes.NewReader(g))
	if err != nil {
		return nil, err
	}
	var src io.Reader = gr
	if maxInflated > 0 {
		src = io.LimitReader(gr, int64(maxInflated)+1)
	}
	var out bytes.Buffer
	zw := zlib.NewWriter(&out)
	n, err := io.Copy(zw, src)
	if err != nil {
		return nil, err
	}
	if maxInflated > 0 && n > int64(maxInflated) {
		return nil, fmt.Errorf("inflates to more than %d bytes", maxInflated)
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
