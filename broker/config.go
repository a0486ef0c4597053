package broker

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"

	"github.com/popshim/popshim/conf"
)

// SettingsFromConfig derives the POP settings from the configuration. cfg
// must have passed conf validation; only values the POP path cannot work
// with are rejected here.
func SettingsFromConfig(cfg *conf.Config) (Settings, error) {
	s := DefaultSettings()
	if cfg == nil {
		return s, fmt.Errorf("handler: nil configuration")
	}
	if cfg.BrokerName != "" {
		s.BrokerName = cfg.BrokerName
	}
	if cfg.ClusterName != "" {
		s.ClusterName = cfg.ClusterName
	}
	if cfg.RegionID != "" {
		s.RegionID = cfg.RegionID
	}
	s.TraceOn = cfg.TraceOn
	if hp, err := ParseHostPort(cfg.BrokerAddr()); err == nil {
		s.StoreHost = hp
	}
	if cfg.MaxParkedPolls > 0 {
		s.MaxParkedPolls = cfg.MaxParkedPolls
	}
	if cfg.PopReaderWorkers > 0 {
		s.Readers = cfg.PopReaderWorkers
	}
	if cfg.PopReaderQueue > 0 {
		s.ReaderQueue = cfg.PopReaderQueue
	}
	if cfg.ReviveInterval > 0 {
		s.Revive.Interval = cfg.ReviveInterval
	}
	if cfg.MaxReconsumeTimes > 0 {
		s.MaxReconsumeTimes = int32(cfg.MaxReconsumeTimes)
	}
	if cfg.MaxMessageSize > 0 {
		s.MaxMessageBytes = cfg.MaxMessageSize
	}
	if s.BrokerName == "" || len(s.BrokerName) > 127 {
		return s, fmt.Errorf("handler: broker name %q must be 1..127 bytes", s.BrokerName)
	}
	return s, nil
}

// ParseHostPort parses "ip:port" into an AddrPort; a host that is not an IP
// literal (or empty) becomes 127.0.0.1.
func ParseHostPort(addr string) (netip.AddrPort, error) {
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
