package handler

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"

	"github.com/popshim/popshim/conf"
)

// settingsFromConfig derives the POP settings from the configuration. cfg
// must have passed conf validation; only values the POP path cannot work
// with are rejected here.
func settingsFromConfig(cfg *conf.Config) (popSettings, error) {
	s := defaultPopSettings()
	if cfg == nil {
		return s, fmt.Errorf("handler: nil configuration")
	}
	if cfg.BrokerName != "" {
		s.brokerName = cfg.BrokerName
	}
	if cfg.ClusterName != "" {
		s.clusterName = cfg.ClusterName
	}
	if hp, err := parseHostPort(cfg.BrokerAddr()); err == nil {
		s.storeHost = hp
	}
	if cfg.MaxParkedPolls > 0 {
		s.maxParkedPolls = cfg.MaxParkedPolls
	}
	if cfg.PopReaderWorkers > 0 {
		s.readers = cfg.PopReaderWorkers
	}
	if cfg.PopReaderQueue > 0 {
		s.readerQueue = cfg.PopReaderQueue
	}
	if cfg.ReviveInterval > 0 {
		s.revive.Interval = cfg.ReviveInterval
	}
	if cfg.MaxReconsumeTimes > 0 {
		s.maxReconsumeTimes = int32(cfg.MaxReconsumeTimes)
	}
	if cfg.MaxMessageSize > 0 {
		s.maxMessageBytes = cfg.MaxMessageSize
	}
	if s.brokerName == "" || len(s.brokerName) > 127 {
		return s, fmt.Errorf("handler: broker name %q must be 1..127 bytes", s.brokerName)
	}
	return s, nil
}

// parseHostPort parses "ip:port" into an AddrPort; a host that is not an IP
// literal (or empty) becomes 127.0.0.1.
func parseHostPort(addr string) (netip.AddrPort, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return netip.AddrPort{}, err
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("handler: port in %q: %w", addr, err)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		ip = netip.MustParseAddr("127.0.0.1")
	}
	return netip.AddrPortFrom(ip.Unmap(), uint16(p)), nil
}

// storeHost returns the address written as storeHost into stored records:
// the advertised broker address once Serve bound the port
// (TopicTable.SetBrokerAddr), else the configured one. The parsed value is
// cached per advertised string. Any goroutine.
func (b *Broker) storeHost() netip.AddrPort {
	a := b.Topics.BrokerAddr()
	if a == "" {
		return b.pop.storeHost
	}
	if c := b.hostCache.Load(); c != nil && c.addr == a {
		return c.host
	}
	hp, err := parseHostPort(a)
	if err != nil {
		return b.pop.storeHost
	}
	b.hostCache.Store(&cachedHost{addr: a, host: hp})
	return hp
}

// cachedHost is one parsed advertised address.
type cachedHost struct {
	addr string
	host netip.AddrPort
}
