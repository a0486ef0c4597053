package handler

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/popstore"
)

// brokerConfigMetaKey holds the settings changed by UPDATE_BROKER_CONFIG
// (a JSON object of Java key → value text) in the meta column family, as a
// Java broker persists them into its broker properties file.
const brokerConfigMetaKey = "brokerConfig"

// runtimeBrokerKeys are the Java broker properties UPDATE_BROKER_CONFIG
// applies at run time: set applies a parsed value to the broker (any
// goroutine), start applies it to the configuration before the tables are
// built (startup only). Every other key is read at start only.
var runtimeBrokerKeys = map[string]struct {
	set   func(b *Broker, v bool)
	start func(cfg *conf.Config, v bool)
}{
	"autoCreateTopicEnable": {
		set:   func(b *Broker, v bool) { b.Topics.SetAutoCreate(v) },
		start: func(cfg *conf.Config, v bool) { cfg.AutoCreateTopic = v },
	},
	"autoCreateSubscriptionGroup": {
		set:   func(b *Broker, v bool) { b.Groups.SetAutoCreate(v) },
		start: func(cfg *conf.Config, v bool) { cfg.AutoCreateSubscriptionGroup = v },
	},
}

// runtimeConfig is the state of UPDATE_BROKER_CONFIG: the persisted
// overrides and the configuration DataVersion counter.
type runtimeConfig struct {
	mu        sync.Mutex
	overrides map[string]string // REQUIRES: mu held; durable values
	staged    map[string]string // REQUIRES: mu held; overrides plus writes in the writer
	counter   int64             // REQUIRES: mu held; committed updates since start
	stamp     int64             // REQUIRES: mu held; ms of the last update, 0 = none
}

// loadBrokerConfigOverrides reads the persisted UPDATE_BROKER_CONFIG values
// and applies them to cfg (they win over flags, as Java's updated
// properties file wins over its earlier content). Startup only: reads
// RocksDB.
func loadBrokerConfigOverrides(cfg *conf.Config, store *popstore.Store) (map[string]string, error) {
	v, err := store.MetaValue(brokerConfigMetaKey)
	if errors.Is(err, popstore.ErrNotFound) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("handler: read broker config overrides: %w", err)
	}
	m := map[string]string{}
	if err := json.Unmarshal(v, &m); err != nil {
		return nil, fmt.Errorf("handler: decode broker config overrides: %w", err)
	}
	for k, val := range m {
		rk, ok := runtimeBrokerKeys[k]
		bv, err := strconv.ParseBool(val)
		if !ok || err != nil {
			return nil, fmt.Errorf("handler: broker config override %s=%q not applicable", k, val)
		}
		rk.start(cfg, bv)
	}
	return m, nil
}

// parseProperties reads java.util.Properties text the way
// MixAll.string2Properties does for mqadmin's one-line bodies: one
// key=value (or key:value) per line, '#' and '!' comment lines, blanks
// around keys and before values ignored. Later keys win.
func parseProperties(text string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		i := strings.IndexAny(line, "=:")
		if i < 0 {
			out[line] = ""
			continue
		}
		out[strings.TrimSpace(line[:i])] = strings.TrimSpace(line[i+1:])
	}
	return out
}
