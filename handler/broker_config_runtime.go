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

// runtimeKey is one Java broker property UPDATE_BROKER_CONFIG applies at
// run time: parse turns the text into the value to keep (its canonical
// text, or an error naming the accepted values), set applies a parsed value
// to the broker (any goroutine), start applies it to the configuration
// before the tables are built (startup only).
type runtimeKey struct {
	parse func(v string) (string, error)
	set   func(b *Broker, v string)
	start func(cfg *conf.Config, v string)
}

// runtimeBrokerKeys are the keys UPDATE_BROKER_CONFIG applies at run time.
// Every other key is read at start only.
var runtimeBrokerKeys = map[string]runtimeKey{
	"autoCreateTopicEnable": {
		parse: parseBoolKey,
		set:   func(b *Broker, v string) { b.Topics.SetAutoCreate(v == "true") },
		start: func(cfg *conf.Config, v string) { cfg.AutoCreateTopic = v == "true" },
	},
	"autoCreateSubscriptionGroup": {
		parse: parseBoolKey,
		set:   func(b *Broker, v string) { b.Groups.SetAutoCreate(v == "true") },
		start: func(cfg *conf.Config, v string) { cfg.AutoCreateSubscriptionGroup = v == "true" },
	},
	// brokerPermission (PermName bits, 0–7): the core's gates and the
	// masked perms of routes and registrations (broker/permission.go);
	// the registrar re-registers when the mask changes.
	"brokerPermission": {
		parse: func(v string) (string, error) {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 0 || n > 7 {
				return "", fmt.Errorf("brokerPermission must be a permission from 0 to 7 (4 read, 2 write, 1 inherit), got %q", v)
			}
			return strconv.Itoa(n), nil
		},
		set: func(b *Broker, v string) {
			n, _ := strconv.Atoi(v)
			b.SetBrokerPermission(int32(n))
		},
		start: func(cfg *conf.Config, v string) { cfg.BrokerPermission, _ = strconv.Atoi(v) },
	},
}

// parseBoolKey accepts "true" or "false" (any case, as Boolean.parseBoolean
// reads what updateBrokerConfig stores).
func parseBoolKey(v string) (string, error) {
	bv, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		return "", fmt.Errorf("must be true or false, got %q", v)
	}
	return strconv.FormatBool(bv), nil
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
		if !ok {
			return nil, fmt.Errorf("handler: broker config override %s=%q not applicable", k, val)
		}
		pv, err := rk.parse(val)
		if err != nil {
			return nil, fmt.Errorf("handler: broker config override %s=%q not applicable: %w", k, val, err)
		}
		rk.start(cfg, pv)
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
