package handler

// GET_BROKER_CONFIG (26).
//
// Header: none.
//
// Behaviour: the broker's configuration as Java properties text, one
// key=value line per setting, sorted by key (AdminBrokerProcessor
// getBrokerConfig answers Configuration.getAllConfigsFormatString; mqadmin
// getBrokerConfig parses it with MixAll.string2Properties and prints
// "key=  value"). Every popshim flag is listed once: under its Java
// BrokerConfig/MessageStoreConfig name where one means the same
// (brokerConfigJavaNames, values converted to Java's unit), else under
// the flag's own name. The response header's "version" is the
// configuration's DataVersion as JSON: counter = UPDATE_BROKER_CONFIG
// updates applied since start, timestamp = the last one's (else the process
// start).
// Memory only: answered on the event loop.
//
// Response codes: SUCCESS (0).

import (
	"encoding/json"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

// brokerConfigJavaNames maps a popshim flag to the Java broker property of
// the same meaning (broker/.../BrokerConfig.java, store/.../config/
// MessageStoreConfig.java) and converts the flag's value to Java's unit.
var brokerConfigJavaNames = map[string]struct {
	key     string
	convert func(flagValue string) string
}{
	"broker-name":                          {"brokerName", nil},
	"cluster-name":                         {"brokerClusterName", nil},
	"region-id":                            {"regionId", nil},
	"trace-on":                             {"traceOn", nil},
	"broker-ip":                            {"brokerIP1", nil},
	"namesrv-addr":                         {"namesrvAddr", nil},
	"data-dir":                             {"storePathRootDir", nil},
	"auto-create-topic":                    {"autoCreateTopicEnable", nil},
	"broker-permission":                    {"brokerPermission", nil},
	"auto-create-subscription-group":       {"autoCreateSubscriptionGroup", nil},
	"enable-property-filter":               {"enablePropertyFilter", nil},
	"message-index-enable":                 {"messageIndexEnable", nil},
	"default-topic-queue-nums":             {"defaultTopicQueueNums", nil},
	"max-message-size":                     {"maxMessageSize", nil},
	"wait-time-mills-in-send-queue":        {"waitTimeMillsInSendQueue", nil},
	"wait-time-mills-in-transaction-queue": {"waitTimeMillsInTransactionQueue", nil},
	"message-delay-level":                  {"messageDelayLevel", nil},
	"timer-max-delay-sec":                  {"timerMaxDelaySec", nil},
	// auth/.../config/AuthConfig.java, part of the broker's configuration.
	"auth-enabled":       {"authenticationEnabled", nil},
	"auth-authorization": {"authorizationEnabled", nil},
	"auth-whitelist":     {"authenticationWhitelist", nil},
	"authz-whitelist":    {"authorizationWhitelist", nil},
	"register-interval":  {"registerNameServerPeriod", durationIn(time.Millisecond)},
	"revive-interval":    {"reviveInterval", durationIn(time.Millisecond)},
	"retention-interval": {"cleanResourceInterval", durationIn(time.Millisecond)},

	// Transactional messages (BrokerConfig), Java in ms.
	"transaction-timeout":        {"transactionTimeOut", durationIn(time.Millisecond)},
	"transaction-check-interval": {"transactionCheckInterval", durationIn(time.Millisecond)},
	"transaction-check-max":      {"transactionCheckMax", nil},

	// Request-reply and recall (BrokerConfig).
	"store-reply-message-enable": {"storeReplyMessageEnable", nil},
	"recall-message-enable":      {"recallMessageEnable", nil},

	// NettyServerConfig, part of Java's broker configuration text.
	"idle-timeout": {"serverChannelMaxIdleTimeSeconds", durationIn(time.Second)},
	"metrics-listen": {"metricsPromExporterPort", func(v string) string {
		_, port, err := net.SplitHostPort(v)
		if err != nil {
			return v
		}
		return port
	}},
	"listen": {"listenPort", func(v string) string {
		_, port, err := net.SplitHostPort(v)
		if err != nil {
			return v
		}
		return port
	}},
	// Java: whole hours.
	"retention": {"fileReservedTime", func(v string) string {
		d, err := time.ParseDuration(v)
		if err != nil {
			return v
		}
		return strconv.FormatInt(int64(d/time.Hour), 10)
	}},
	// Java: int percentages.
	"disk-space-warning-level-ratio":  {"diskSpaceWarningLevelRatio", percent},
	"disk-space-clean-forcibly-ratio": {"diskSpaceCleanForciblyRatio", percent},
}

// percent converts a ratio flag value (0.9) to Java's int percentage (90).
func percent(v string) string {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return v
	}
	return strconv.Itoa(int(f*100 + 0.5))
}

// durationIn converts a Go duration flag value to a whole number of unit,
// the form of Java's millisecond and second properties.
func durationIn(unit time.Duration) func(string) string {
	return func(v string) string {
		d, err := time.ParseDuration(v)
		if err != nil {
			return v
		}
		return strconv.FormatInt(int64(d/unit), 10)
	}
}

// brokerConfigText renders the configuration as properties lines.
func (b *Broker) brokerConfigText() []byte {
	cfg := *b.Cfg
	cfg.AutoCreateTopic = b.Topics.Settings().AutoCreate
	cfg.AutoCreateSubscriptionGroup = b.Groups.Settings().AutoCreate
	cfg.BrokerPermission = int(b.BrokerPermission())
	fs := pflag.NewFlagSet("config", pflag.ContinueOnError)
	cfg.BindFlags(fs)
	lines := make([]string, 0, 64)
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || conf.SecretFlags[f.Name] {
			return
		}
		key, val := f.Name, f.Value.String()
		if j, ok := brokerConfigJavaNames[f.Name]; ok {
			key = j.key
			if j.convert != nil {
				val = j.convert(val)
			}
		}
		lines = append(lines, key+"="+propertiesEscape(val))
	})
	sort.Strings(lines)
	return []byte(strings.Join(lines, "\n") + "\n")
}

// propertiesEscape escapes a value for java.util.Properties.load:
// backslashes, and a leading space.
func propertiesEscape(v string) string {
	v = strings.ReplaceAll(v, `\`, `\\`)
	if strings.HasPrefix(v, " ") {
		v = `\` + v
	}
	return v
}

func (b *Broker) handleGetBrokerConfig(c remoting.Conn, req *codec.Command) {
	resp := codec.NewResponse(req, codec.Success, "")
	resp.Body = b.brokerConfigText()
	b.runtimeCfg.mu.Lock()
	dv := codec.DataVersion{Counter: b.runtimeCfg.counter, Timestamp: b.runtimeCfg.stamp}
	b.runtimeCfg.mu.Unlock()
	if dv.Timestamp == 0 {
		dv.Timestamp = processStart.UnixMilli()
	}
	version, _ := json.Marshal(dv)
	resp.SetExt("version", string(version))
	reply.Respond(c, req, resp)
}
