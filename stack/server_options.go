package stack

import (
	"github.com/rs/zerolog"

	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/remoting"
)

// BrokerServerOptions returns the remoting options of the broker listener
// (--listen and the connection flags; --reply-max-bytes, which the
// embedded name server's listener shares). m may be nil (no metrics).
func BrokerServerOptions(c *conf.Config, m *remoting.Metrics) remoting.ServerOptions {
	return serverOptions(c, "broker", c.Listen, m)
}

// NamesrvServerOptions returns the remoting options of the embedded name
// server listener (only meaningful when --namesrv-listen is not empty).
func NamesrvServerOptions(c *conf.Config, m *remoting.Metrics) remoting.ServerOptions {
	return serverOptions(c, "namesrv", c.NamesrvListen, m)
}

func serverOptions(c *conf.Config, name, addr string, m *remoting.Metrics) remoting.ServerOptions {
	idle := c.IdleTimeout
	if idle == 0 {
		idle = -1 // remoting: negative disables, zero means its default
	}
	maxConns := c.MaxConns
	if maxConns == 0 {
		maxConns = -1 // as for idle: conf 0 disables, remoting spells that negative
	}
	return remoting.ServerOptions{
		Name:          name,
		Addr:          addr,
		MaxFrameBytes: c.MaxFrameSize,
		IdleTimeout:   idle,
		MaxConns:      maxConns,
		MaxReadBytes:  c.EffectiveReadMaxBytes(),
		MaxReplyBytes: c.EffectiveReplyMaxBytes(),
		EventLoops:    c.EventLoops,
		Metrics:       m,

		TLSMode:             c.TLS.TLSMode(),
		TLSHandshakeTimeout: c.TLS.HandshakeTimeout,
	}
}

// StoreOptions returns the popstore options cfg gives (no WriteHook):
// data directory, retention (--retention ≤ 0: none), RocksDB LOG
// directory, key index, and the messages memtable sized from
// --queue-max-bytes (conf.Config.MessagesMemtableBytes). log may be nil.
// Any goroutine.
func StoreOptions(cfg *conf.Config, log *zerolog.Logger) popstore.Options {
	o := popstore.Options{Dir: cfg.DataDir, Logger: log, RetentionMillis: cfg.Retention.Milliseconds(),
		InfoLogDir: cfg.RocksDBLogDir, DisableMessageIndex: !cfg.MessageIndexEnable,
		MessagesMemtableBytes: cfg.MessagesMemtableBytes()}
	if cfg.Retention <= 0 {
		o.RetentionMillis = -1
	}
	return o
}
