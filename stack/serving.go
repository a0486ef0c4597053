package stack

import (
	"time"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/conf"
)

// logServing writes the start-up line "popshim serving" once every
// listener is up: where they are, and the settings an operator checks
// first, as the running broker applies them:
//
//   - retention: how long the store keeps messages (popstore's
//     RetentionMillis, "off" when disabled) and retentionInterval, how
//     often the writer's retention pass runs;
//   - diskSpaceWarningLevelRatio (SENDs refused above it) and
//     diskSpaceCleanForciblyRatio (the oldest messages deleted before
//     retention ends above it), used fractions of the data directory's
//     filesystem, 0 disabling either;
//   - autoCreateTopicEnable and autoCreateSubscriptionGroup from the topic
//     and group tables, so a value UPDATE_BROKER_CONFIG stored earlier,
//     which wins over the flag (handler/broker_config_runtime.go), shows
//     here; defaultTopicQueueNums, the queue count an auto-created topic
//     gets at most.
//
// Start-up goroutine (StartStack).
func (st *Stack) logServing(cfg *conf.Config, mode batch.Mode) {
	ev := st.log.Info().Str("brokerName", cfg.BrokerName).Str("cluster", cfg.ClusterName).
		Str("listen", st.BrokerAddr()).Str("advertised", st.Broker.Topics.BrokerAddr()).
		Str("dataDir", cfg.DataDir).Str("writeMode", string(mode))
	if a := st.NamesrvAddr(); a != "" {
		ev = ev.Str("namesrv", a)
	}
	if a := st.GRPCAddr(); a != "" {
		ev = ev.Str("grpc", a)
	}
	if a := st.MetricsAddr(); a != "" {
		ev = ev.Str("metrics", a)
		if cfg.Pprof {
			ev = ev.Bool("pprof", true)
		}
	}
	retention := "off"
	if ms := st.Store.RetentionMillis(); ms >= 0 {
		retention = (time.Duration(ms) * time.Millisecond).String()
	}
	topics, groups := st.Broker.Topics.Settings(), st.Broker.Groups.Settings()
	ev.Str("retention", retention).Str("retentionInterval", cfg.RetentionInterval.String()).
		Float64("diskSpaceWarningLevelRatio", cfg.DiskSpaceWarningLevelRatio).
		Float64("diskSpaceCleanForciblyRatio", cfg.DiskSpaceCleanForciblyRatio).
		Bool("autoCreateTopicEnable", topics.AutoCreate).
		Bool("autoCreateSubscriptionGroup", groups.AutoCreate).
		Int32("defaultTopicQueueNums", topics.DefaultQueueNums).
		Strs("registerWith", cfg.NamesrvAddrs()).Msg("popshim serving")
}
