package conf

import (
	"time"

	"github.com/popshim/popshim/codec"
)

// Default returns the configuration with every default filled in except
// the auto-detected BrokerIP (see Load).
func Default() *Config {
	return &Config{
		Listen:                      ":10911",
		NamesrvListen:               ":9876",
		RegisterInterval:            30 * time.Second,
		MetricsListen:               ":5557",
		GRPCListen:                  ":8081",
		GRPCMaxConcurrentStreams:    256,
		DataDir:                     "./data",
		LogLevel:                    "info",
		LogFormat:                   LogFormatAuto,
		MaxFrameSize:                codec.DefaultMaxFrame,
		MaxMessageSize:              4 << 20,
		BrokerName:                  "popshim-a",
		ClusterName:                 "DefaultCluster",
		RegionID:                    "DefaultRegion",
		TraceOn:                     true,
		AutoCreateTopic:             true,
		AutoCreateSubscriptionGroup: true,
		BrokerPermission:            6,
		DefaultTopicQueueNums:       8,
		Retention:                   72 * time.Hour,
		RetentionInterval:           10 * time.Minute,
		MessageIndexEnable:          true,
		EnablePropertyFilter:        true,
		PopWriteMode:                "group",
		SyncWorkers:                 16,
		GCPercent:                   400,
		BatchMaxOps:                 4096,
		BatchMaxBytes:               8 << 20,
		QueueCapacity:               100000,
		QueueMaxBytes:               256 << 20,

		WaitTimeMillsInSendQueue:        200,
		WaitTimeMillsInTransactionQueue: 3000,
		DiskSpaceWarningLevelRatio:      0.90,
		DiskSpaceCleanForciblyRatio:     0.85,
		WriterProbeInterval:             time.Second,
		BackgroundShare:                 0.25,
		BatchMaxBulkOps:                 16,
		MaxParkedPolls:                  100000,
		ReviveInterval:                  500 * time.Millisecond,
		MaxReconsumeTimes:               16,
		MessageDelayLevel:               "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h",
		TimerMaxDelaySec:                3 * 24 * 3600,
		TimerDrainShare:                 0.25,
		TransactionTimeout:              6 * time.Second,
		TransactionCheckInterval:        30 * time.Second,
		TransactionCheckMax:             15,
		StoreReplyMessageEnable:         true,
		RebalanceLockMaxLiveTime:        60 * time.Second,
		PopReaderWorkers:                4,
		PopReaderQueue:                  10000,
		IdleTimeout:                     120 * time.Second,
		MaxConns:                        DefaultMaxConns,
		ShutdownTimeout:                 10 * time.Second,
		TLS:                             TLS{HandshakeTimeout: DefaultTLSHandshakeTimeout},

		MaxHeartbeatGroups:        1000,
		MaxHeartbeatSubscriptions: 1000,
		MaxConnClientChannels:     10000,
		AuthAuthorization:         true,
	}
}
