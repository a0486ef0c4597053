package codec

import "strconv"

// Request codes carried in Command.Code of a request
// (remoting/src/main/java/org/apache/rocketmq/remoting/protocol/RequestCode.java).
// Codes above 32767 (the POP family) only travel in JSON headers: the
// ROCKETMQ binary header truncates them to 16 bits.
const (
	// Client → broker: produce.

	// RequestSendMessage is SEND_MESSAGE (10), long-name header; the Go producer's single send.
	RequestSendMessage int32 = 10
	// RequestSendMessageV2 is SEND_MESSAGE_V2 (310), single-letter header a..n; the Java producer default.
	RequestSendMessageV2 int32 = 310
	// RequestSendBatchMessage is SEND_BATCH_MESSAGE (320), V2 header, body of MessageDecoder.encodeMessages records.
	RequestSendBatchMessage int32 = 320
	// RequestSendReplyMessage is SEND_REPLY_MESSAGE (324), V1 header.
	RequestSendReplyMessage int32 = 324
	// RequestSendReplyMessageV2 is SEND_REPLY_MESSAGE_V2 (325), V2 header.
	RequestSendReplyMessageV2 int32 = 325
	// RequestEndTransaction is END_TRANSACTION (37), sent oneway by transactional producers.
	RequestEndTransaction int32 = 37
	// RequestRecallMessage is RECALL_MESSAGE (370).
	RequestRecallMessage int32 = 370

	// Client → broker: pull consumption.

	// RequestPullMessage is PULL_MESSAGE (11).
	RequestPullMessage int32 = 11
	// RequestLitePullMessage is LITE_PULL_MESSAGE (361), same header as PULL_MESSAGE.
	RequestLitePullMessage int32 = 361
	// RequestQueryMessage is QUERY_MESSAGE (12), lookup by key.
	RequestQueryMessage int32 = 12
	// RequestViewMessageByID is VIEW_MESSAGE_BY_ID (33), lookup by commit-log offset.
	RequestViewMessageByID int32 = 33
	// RequestQueryConsumerOffset is QUERY_CONSUMER_OFFSET (14).
	RequestQueryConsumerOffset int32 = 14
	// RequestUpdateConsumerOffset is UPDATE_CONSUMER_OFFSET (15); Java sends it oneway.
	RequestUpdateConsumerOffset int32 = 15
	// RequestSearchOffsetByTimestamp is SEARCH_OFFSET_BY_TIMESTAMP (29).
	RequestSearchOffsetByTimestamp int32 = 29
	// RequestGetMaxOffset is GET_MAX_OFFSET (30).
	RequestGetMaxOffset int32 = 30
	// RequestGetMinOffset is GET_MIN_OFFSET (31).
	RequestGetMinOffset int32 = 31
	// RequestGetEarliestMsgStoreTime is GET_EARLIEST_MSG_STORETIME (32).
	RequestGetEarliestMsgStoreTime int32 = 32
	// RequestConsumerSendMsgBack is CONSUMER_SEND_MSG_BACK (36).
	RequestConsumerSendMsgBack int32 = 36
	// RequestGetConsumerListByGroup is GET_CONSUMER_LIST_BY_GROUP (38).
	RequestGetConsumerListByGroup int32 = 38
	// RequestLockBatchMQ is LOCK_BATCH_MQ (41).
	RequestLockBatchMQ int32 = 41
	// RequestUnlockBatchMQ is UNLOCK_BATCH_MQ (42).
	RequestUnlockBatchMQ int32 = 42
	// RequestCheckClientConfig is CHECK_CLIENT_CONFIG (46).
	RequestCheckClientConfig int32 = 46

	// Client → broker: membership and assignment.

	// RequestHeartBeat is HEART_BEAT (34).
	RequestHeartBeat int32 = 34
	// RequestUnregisterClient is UNREGISTER_CLIENT (35).
	RequestUnregisterClient int32 = 35
	// RequestQueryAssignment is QUERY_ASSIGNMENT (400), server-side rebalance.
	RequestQueryAssignment int32 = 400
	// RequestSetMessageRequestMode is SET_MESSAGE_REQUEST_MODE (401).
	RequestSetMessageRequestMode int32 = 401

	// Client → broker: POP family (JSON headers only).

	// RequestPopMessage is POP_MESSAGE (200050).
	RequestPopMessage int32 = 200050
	// RequestAckMessage is ACK_MESSAGE (200051).
	RequestAckMessage int32 = 200051
	// RequestPeekMessage is PEEK_MESSAGE (200052).
	RequestPeekMessage int32 = 200052
	// RequestChangeMessageInvisibleTime is CHANGE_MESSAGE_INVISIBLETIME (200053).
	RequestChangeMessageInvisibleTime int32 = 200053
	// RequestNotification is NOTIFICATION (200054).
	RequestNotification int32 = 200054
	// RequestPollingInfo is POLLING_INFO (200055).
	RequestPollingInfo int32 = 200055
	// RequestPopRollback is POP_ROLLBACK (200056).
	RequestPopRollback int32 = 200056
	// RequestBatchAckMessage is BATCH_ACK_MESSAGE (200151).
	RequestBatchAckMessage int32 = 200151

	// Admin → broker.

	// RequestUpdateAndCreateTopic is UPDATE_AND_CREATE_TOPIC (17).
	RequestUpdateAndCreateTopic int32 = 17
	// RequestGetAllTopicConfig is GET_ALL_TOPIC_CONFIG (21).
	RequestGetAllTopicConfig int32 = 21
	// RequestGetBrokerRuntimeInfo is GET_BROKER_RUNTIME_INFO (28).
	RequestGetBrokerRuntimeInfo int32 = 28
	// RequestUpdateAndCreateSubscriptionGroup is UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200); body SubscriptionGroupConfig.
	RequestUpdateAndCreateSubscriptionGroup int32 = 200
	// RequestGetAllSubscriptionGroupConfig is GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201).
	RequestGetAllSubscriptionGroupConfig int32 = 201
	// RequestDeleteSubscriptionGroup is DELETE_SUBSCRIPTIONGROUP (207).
	RequestDeleteSubscriptionGroup int32 = 207
	// RequestUpdateAndCreateSubscriptionGroupList is UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST (225);
	// body {"groupConfigList":[SubscriptionGroupConfig...]}.
	RequestUpdateAndCreateSubscriptionGroupList int32 = 225
	// RequestDeleteSubscriptionGroupList is DELETE_SUBSCRIPTION_GROUP_LIST (5003);
	// body {"cleanOffset":bool,"groupNameList":[...]}.
	RequestDeleteSubscriptionGroupList int32 = 5003
	// RequestDeleteTopicInBroker is DELETE_TOPIC_IN_BROKER (215).
	RequestDeleteTopicInBroker int32 = 215
	// RequestGetTopicConfig is GET_TOPIC_CONFIG (351).
	RequestGetTopicConfig int32 = 351
	// RequestGetSubscriptionGroupConfig is GET_SUBSCRIPTIONGROUP_CONFIG (352).
	RequestGetSubscriptionGroupConfig int32 = 352

	// RequestGetBrokerConfig reads the broker's configuration as properties text (GET_BROKER_CONFIG).
	RequestGetBrokerConfig int32 = 26
	// RequestUpdateAndCreateTopicList creates or updates several topics at once (UPDATE_AND_CREATE_TOPIC_LIST);
	// body {"topicConfigList":[TopicConfig...]} (body/CreateTopicListRequestBody.java).
	RequestUpdateAndCreateTopicList int32 = 18
	// RequestPutKVConfig stores a name-server KV item (PUT_KV_CONFIG, name-server role); mqadmin
	// `updateTopic -o true` sends it with namespace ORDER_TOPIC_CONFIG.
	RequestPutKVConfig int32 = 100
	// RequestGetTopicStatsInfo answers min/max offsets of every queue of a topic (GET_TOPIC_STATS_INFO).
	RequestGetTopicStatsInfo int32 = 202
	// RequestGetConsumerConnectionList lists a consumer group's connections (GET_CONSUMER_CONNECTION_LIST).
	RequestGetConsumerConnectionList int32 = 203
	// RequestGetProducerConnectionList lists a producer group's connections (GET_PRODUCER_CONNECTION_LIST).
	RequestGetProducerConnectionList int32 = 204
	// RequestGetAllProducerInfo lists every producer group's live clients (GET_ALL_PRODUCER_INFO; mqadmin `producer -b`).
	RequestGetAllProducerInfo int32 = 328
	// RequestGetConsumeStats answers a group's consume progress per queue (GET_CONSUME_STATS).
	RequestGetConsumeStats int32 = 208
	// RequestQueryTopicConsumeByWho lists the groups consuming a topic (QUERY_TOPIC_CONSUME_BY_WHO).
	RequestQueryTopicConsumeByWho int32 = 300
	// RequestInvokeBrokerToResetOffset resets a group's consume offsets of a topic by store time
	// (INVOKE_BROKER_TO_RESET_OFFSET); header ResetOffsetRequestHeader, SUCCESS body ResetOffsetBody.
	RequestInvokeBrokerToResetOffset int32 = 222
	// RequestCleanExpiredConsumeQueue is CLEAN_EXPIRED_CONSUMEQUEUE (306), mqadmin cleanExpiredCQ; no header.
	RequestCleanExpiredConsumeQueue int32 = 306
	// RequestGetBrokerConsumeStats is GET_BROKER_CONSUME_STATS (317), mqadmin brokerConsumeStats;
	// header GetConsumeStatsInBrokerHeader (isOrder), SUCCESS body ConsumeStatsList.
	RequestGetBrokerConsumeStats int32 = 317
	// RequestQueryConsumeQueue is QUERY_CONSUME_QUEUE (321), mqadmin queryCq; header
	// QueryConsumeQueueRequestHeader, SUCCESS body QueryConsumeQueueResponseBody.
	RequestQueryConsumeQueue int32 = 321
	// RequestUpdateBrokerConfig is UPDATE_BROKER_CONFIG (25), mqadmin updateBrokerConfig; body properties text.
	RequestUpdateBrokerConfig int32 = 25
	// RequestGetSystemTopicListFromBroker lists the broker's system topics
	// (GET_SYSTEM_TOPIC_LIST_FROM_BROKER); no header, SUCCESS body TopicList.
	RequestGetSystemTopicListFromBroker int32 = 305

	// Client/broker → name server.

	// RequestRegisterBroker is REGISTER_BROKER (103).
	RequestRegisterBroker int32 = 103
	// RequestUnregisterBroker is UNREGISTER_BROKER (104).
	RequestUnregisterBroker int32 = 104
	// RequestGetRouteInfoByTopic is GET_ROUTEINFO_BY_TOPIC (105).
	RequestGetRouteInfoByTopic int32 = 105
	// RequestGetBrokerClusterInfo is GET_BROKER_CLUSTER_INFO (106).
	RequestGetBrokerClusterInfo int32 = 106
	// RequestGetAllTopicListFromNameServer is GET_ALL_TOPIC_LIST_FROM_NAMESERVER (206).
	RequestGetAllTopicListFromNameServer int32 = 206
	// RequestDeleteTopicInNamesrv is DELETE_TOPIC_IN_NAMESRV (216).
	RequestDeleteTopicInNamesrv int32 = 216
	// RequestQueryDataVersion is QUERY_DATA_VERSION (322).
	RequestQueryDataVersion int32 = 322
	// RequestBrokerHeartbeat is BROKER_HEARTBEAT (904).
	RequestBrokerHeartbeat int32 = 904

	// Broker → client (the client's ClientRemotingProcessor.java).

	// RequestCheckTransactionState is CHECK_TRANSACTION_STATE (39), oneway.
	RequestCheckTransactionState int32 = 39
	// RequestNotifyConsumerIDsChanged is NOTIFY_CONSUMER_IDS_CHANGED (40), oneway; header consumerGroup.
	RequestNotifyConsumerIDsChanged int32 = 40
	// RequestResetConsumerClientOffset is RESET_CONSUMER_CLIENT_OFFSET (220), oneway.
	RequestResetConsumerClientOffset int32 = 220
	// RequestGetConsumerStatusFromClient is GET_CONSUMER_STATUS_FROM_CLIENT (221).
	RequestGetConsumerStatusFromClient int32 = 221
	// RequestGetConsumerRunningInfo is GET_CONSUMER_RUNNING_INFO (307).
	RequestGetConsumerRunningInfo int32 = 307
	// RequestConsumeMessageDirectly is CONSUME_MESSAGE_DIRECTLY (309).
	RequestConsumeMessageDirectly int32 = 309
	// RequestPushReplyMessageToClient is PUSH_REPLY_MESSAGE_TO_CLIENT (326).
	RequestPushReplyMessageToClient int32 = 326
)

// requestNames maps every request code above to its Java constant name
// (TestEveryConstantNamed parses this file and checks it).
var requestNames = map[int32]string{
	RequestSendMessage: "SEND_MESSAGE", RequestSendMessageV2: "SEND_MESSAGE_V2",
	RequestSendBatchMessage: "SEND_BATCH_MESSAGE", RequestSendReplyMessage: "SEND_REPLY_MESSAGE",
	RequestSendReplyMessageV2: "SEND_REPLY_MESSAGE_V2", RequestEndTransaction: "END_TRANSACTION",
	RequestRecallMessage: "RECALL_MESSAGE", RequestPullMessage: "PULL_MESSAGE",
	RequestLitePullMessage: "LITE_PULL_MESSAGE", RequestQueryMessage: "QUERY_MESSAGE",
	RequestViewMessageByID: "VIEW_MESSAGE_BY_ID", RequestQueryConsumerOffset: "QUERY_CONSUMER_OFFSET",
	RequestUpdateConsumerOffset: "UPDATE_CONSUMER_OFFSET", RequestSearchOffsetByTimestamp: "SEARCH_OFFSET_BY_TIMESTAMP",
	RequestGetMaxOffset: "GET_MAX_OFFSET", RequestGetMinOffset: "GET_MIN_OFFSET",
	RequestGetEarliestMsgStoreTime: "GET_EARLIEST_MSG_STORETIME", RequestConsumerSendMsgBack: "CONSUMER_SEND_MSG_BACK",
	RequestGetConsumerListByGroup: "GET_CONSUMER_LIST_BY_GROUP", RequestLockBatchMQ: "LOCK_BATCH_MQ",
	RequestUnlockBatchMQ: "UNLOCK_BATCH_MQ", RequestCheckClientConfig: "CHECK_CLIENT_CONFIG",
	RequestHeartBeat: "HEART_BEAT", RequestUnregisterClient: "UNREGISTER_CLIENT",
	RequestQueryAssignment: "QUERY_ASSIGNMENT", RequestSetMessageRequestMode: "SET_MESSAGE_REQUEST_MODE",
	RequestPopMessage: "POP_MESSAGE", RequestAckMessage: "ACK_MESSAGE", RequestPeekMessage: "PEEK_MESSAGE",
	RequestChangeMessageInvisibleTime: "CHANGE_MESSAGE_INVISIBLETIME", RequestNotification: "NOTIFICATION",
	RequestPollingInfo: "POLLING_INFO", RequestPopRollback: "POP_ROLLBACK",
	RequestBatchAckMessage: "BATCH_ACK_MESSAGE", RequestUpdateAndCreateTopic: "UPDATE_AND_CREATE_TOPIC",
	RequestGetAllTopicConfig: "GET_ALL_TOPIC_CONFIG", RequestGetBrokerRuntimeInfo: "GET_BROKER_RUNTIME_INFO",
	RequestGetSystemTopicListFromBroker:         "GET_SYSTEM_TOPIC_LIST_FROM_BROKER",
	RequestGetAllSubscriptionGroupConfig:        "GET_ALL_SUBSCRIPTIONGROUP_CONFIG",
	RequestUpdateAndCreateSubscriptionGroup:     "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP",
	RequestDeleteSubscriptionGroup:              "DELETE_SUBSCRIPTIONGROUP",
	RequestUpdateAndCreateSubscriptionGroupList: "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST",
	RequestDeleteSubscriptionGroupList:          "DELETE_SUBSCRIPTION_GROUP_LIST",
	RequestDeleteTopicInBroker:                  "DELETE_TOPIC_IN_BROKER", RequestGetTopicConfig: "GET_TOPIC_CONFIG",
	RequestGetSubscriptionGroupConfig: "GET_SUBSCRIPTIONGROUP_CONFIG", RequestRegisterBroker: "REGISTER_BROKER",
	RequestUnregisterBroker: "UNREGISTER_BROKER", RequestGetRouteInfoByTopic: "GET_ROUTEINFO_BY_TOPIC",
	RequestGetBrokerClusterInfo: "GET_BROKER_CLUSTER_INFO", RequestGetAllTopicListFromNameServer: "GET_ALL_TOPIC_LIST_FROM_NAMESERVER",
	RequestDeleteTopicInNamesrv: "DELETE_TOPIC_IN_NAMESRV", RequestQueryDataVersion: "QUERY_DATA_VERSION",
	RequestBrokerHeartbeat: "BROKER_HEARTBEAT", RequestCheckTransactionState: "CHECK_TRANSACTION_STATE",
	RequestNotifyConsumerIDsChanged: "NOTIFY_CONSUMER_IDS_CHANGED", RequestResetConsumerClientOffset: "RESET_CONSUMER_CLIENT_OFFSET",
	RequestInvokeBrokerToResetOffset:   "INVOKE_BROKER_TO_RESET_OFFSET",
	RequestGetConsumerStatusFromClient: "GET_CONSUMER_STATUS_FROM_CLIENT", RequestGetConsumerRunningInfo: "GET_CONSUMER_RUNNING_INFO",
	RequestConsumeMessageDirectly: "CONSUME_MESSAGE_DIRECTLY", RequestPushReplyMessageToClient: "PUSH_REPLY_MESSAGE_TO_CLIENT",
	RequestGetBrokerConfig: "GET_BROKER_CONFIG", RequestUpdateAndCreateTopicList: "UPDATE_AND_CREATE_TOPIC_LIST",
	RequestPutKVConfig: "PUT_KV_CONFIG", RequestGetTopicStatsInfo: "GET_TOPIC_STATS_INFO",
	RequestGetConsumerConnectionList: "GET_CONSUMER_CONNECTION_LIST", RequestGetProducerConnectionList: "GET_PRODUCER_CONNECTION_LIST", RequestGetAllProducerInfo: "GET_ALL_PRODUCER_INFO",
	RequestGetConsumeStats: "GET_CONSUME_STATS", RequestQueryTopicConsumeByWho: "QUERY_TOPIC_CONSUME_BY_WHO",
	RequestCleanExpiredConsumeQueue: "CLEAN_EXPIRED_CONSUMEQUEUE", RequestGetBrokerConsumeStats: "GET_BROKER_CONSUME_STATS",
	RequestUpdateBrokerConfig: "UPDATE_BROKER_CONFIG", RequestQueryConsumeQueue: "QUERY_CONSUME_QUEUE",
}

// RequestName returns the Java RequestCode constant name of code (a Go
// constant above or one of javaOnlyRequestNames), or "UNKNOWN_<code>" for a
// code RequestCode.java does not define. Safe for concurrent use (the tables
// are read-only).
func RequestName(code int32) string {
	if n, ok := LookupRequestName(code); ok {
		return n
	}
	return "UNKNOWN_" + strconv.Itoa(int(code))
}

// LookupRequestName returns the Java RequestCode constant name of code and
// true, or "" and false when RequestCode.java defines no constant for it.
// Safe for concurrent use.
func LookupRequestName(code int32) (string, bool) {
	if n, ok := requestNames[code]; ok {
		return n, true
	}
	n, ok := javaOnlyRequestNames[code]
	return n, ok
}

// RequestCodes returns every request code this package can name (the Go
// constants and the other RequestCode.java constants), in no particular
// order. The slice is freshly allocated.
func RequestCodes() []int32 {
	out := make([]int32, 0, len(requestNames)+len(javaOnlyRequestNames))
	for c := range requestNames {
		out = append(out, c)
	}
	for c := range javaOnlyRequestNames {
		out = append(out, c)
	}
	return out
}
