package conf

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// EffectiveReadMaxBytes returns the read budget of each remoting listener
// (remoting.ServerOptions.MaxReadBytes): -1 for none, else ReadMaxBytes or
// its default, half of QueueMaxBytes.
func (c *Config) EffectiveReadMaxBytes() int64 { return c.orHalfQueue(c.ReadMaxBytes) }

// EffectiveReplyMaxBytes returns the reply bound of the broker listener
// (remoting.ServerOptions.MaxReplyBytes): -1 for none, else ReplyMaxBytes
// or its default, half of QueueMaxBytes.
func (c *Config) EffectiveReplyMaxBytes() int64 { return c.orHalfQueue(c.ReplyMaxBytes) }

// orHalfQueue resolves a byte bound flag: -1 (none) when negative, v when
// positive, half of QueueMaxBytes when 0.
func (c *Config) orHalfQueue(v int64) int64 {
	switch {
	case v < 0:
		return -1
	case v > 0:
		return v
	}
	return c.QueueMaxBytes / 2
}

// MessagesMemtableBytes returns the messages family's RocksDB write buffer
// (popstore.Options.MessagesMemtableBytes), bytes: what QueueMaxBytes
// leaves above 128 MiB, between 16 MiB and popstore's default of 128 MiB.
// Sustained produce keeps two such memtables alive beside the Go heap
// (EffectiveMemoryLimit, QueueMaxBytes + 64 MiB), so with the default
// 256 MiB queue bound nothing changes, and a smaller --queue-max-bytes
// shrinks the memtables with the rest of the broker's memory: RSS stays
// under 2 × --queue-max-bytes + 100 MiB in a flood of 1 MiB SENDs
// from a 64 MiB queue bound up (testdata/bench/memory.sh, 2026-12-05: at
// 64 MiB 215 MiB against 533 with the fixed 128 MiB memtable; below it
// the fixed parts pass the formula's 100 MiB, 185 MiB at 32 MiB).
func (c *Config) MessagesMemtableBytes() int64 {
	return min(max(c.QueueMaxBytes-128<<20, 16<<20), 128<<20)
}

// EffectiveGRPCMaxRecvBytes returns the largest request the gRPC port
// reads (grpcserver.Config.MaxRecvMsgBytes): GRPCMaxRecvBytes, or when 0
// MaxMessageSize + 1 MiB for the properties and the envelope.
func (c *Config) EffectiveGRPCMaxRecvBytes() int {
	if c.GRPCMaxRecvBytes > 0 {
		return c.GRPCMaxRecvBytes
	}
	return c.MaxMessageSize + 1<<20
}

// EffectiveMemoryLimit returns the soft memory limit Serve applies when
// GOMEMLIMIT is unset: 0 for none, else MemoryLimit or its default,
// QueueMaxBytes + 64 MiB, which Serve raises while the live heap other
// than held frames needs more (stack/memlimit.go). With GOMEMLIMIT set
// only a positive MemoryLimit is applied (stack/memlimit_plan.go).
func (c *Config) EffectiveMemoryLimit() int64 {
	switch {
	case c.MemoryLimit < 0:
		return 0
	case c.MemoryLimit > 0:
		return c.MemoryLimit
	}
	return c.QueueMaxBytes + 64<<20
}

// MemoryLimitCeiling returns the most Serve raises the default soft memory
// limit to (stack/memlimit.go): 2 × QueueMaxBytes + 512 MiB.
func (c *Config) MemoryLimitCeiling() int64 {
	return 2*c.QueueMaxBytes + 512<<20
}

// NamesrvAddrs splits NamesrvAddr into host:port entries, dropping empty
// ones. Nil when none are configured.
func (c *Config) NamesrvAddrs() []string {
	var out []string
	for _, a := range strings.FieldsFunc(c.NamesrvAddr, func(r rune) bool { return r == ';' || r == ',' }) {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// BrokerAddr is the advertised broker address BrokerIP:port, with the port
// taken from Listen. When Listen asks for port 0, pass the bound port
// (remoting.Server.Addr) instead: BrokerAddrWithPort.
func (c *Config) BrokerAddr() string {
	_, port, _ := net.SplitHostPort(c.Listen)
	return net.JoinHostPort(c.BrokerIP, port)
}

// BrokerAddrWithPort is BrokerIP:port for an explicit port.
func (c *Config) BrokerAddrWithPort(port int) string {
	return net.JoinHostPort(c.BrokerIP, strconv.Itoa(port))
}

// Defaults shared with the listeners: a remoting.ServerOptions zero value
// means the same numbers (TestDefaultsMatchRemoting in handler checks it).
const (
	// DefaultMaxConns is the default --max-conns: far above what clients
	// of one broker open, far below what exhausts file descriptors.
	DefaultMaxConns = 10000
	// DefaultTLSHandshakeTimeout is the default --tls-handshake-timeout
	// (Netty SslHandler's 10 s).
	DefaultTLSHandshakeTimeout = 10 * time.Second
)

// DelayLevelMillis returns the delays of DELAY levels 1..N, ms, from
// MessageDelayLevel: space-separated durations with unit s, m, h or d, as
// ScheduleMessageService.parseDelayLevel reads messageDelayLevel. An error
// names the first bad entry, or says there is none; Validate reports it
// under --message-delay-level.
func (c *Config) DelayLevelMillis() ([]int64, error) {
	units := map[byte]int64{'s': 1000, 'm': 60 * 1000, 'h': 3600 * 1000, 'd': 24 * 3600 * 1000}
	var out []int64
	for _, f := range strings.Fields(c.MessageDelayLevel) {
		unit, ok := units[f[len(f)-1]]
		n, err := strconv.ParseInt(f[:len(f)-1], 10, 64)
		if !ok || err != nil || n < 0 {
			return nil, fmt.Errorf("bad delay level %q (want a number and s, m, h or d)", f)
		}
		out = append(out, n*unit)
	}
	if len(out) == 0 {
		return nil, errors.New("no delay levels")
	}
	return out, nil
}
