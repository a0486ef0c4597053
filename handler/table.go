package handler

import (
	"github.com/popshim/popshim/auth"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/remoting"
)

// RegisterBroker fills the broker port's dispatch table: one line per
// request code, the handler named after the Java constant. Router.Handle
// panics when a code is registered twice. Codes not listed are answered
// REQUEST_CODE_NOT_SUPPORTED by the remoting layer. Call before the server
// starts. Codes whose answer can be large are wrapped in largeReply, those
// that encode a whole table in tableReply (reply_bound.go).
func RegisterBroker(r *remoting.Router, b *Broker) {
	// The produce handlers encode the stored record before they return
	// (broker.SendRequest keeps no part of Body), so they read the body
	// where the event loop received it.
	r.HandleBorrowing(codec.RequestSendMessage, b.handleSendMessage)
	r.HandleBorrowing(codec.RequestSendMessageV2, b.handleSendMessage)
	r.HandleBorrowing(codec.RequestSendBatchMessage, b.handleSendBatchMessage)
	r.Handle(codec.RequestSendReplyMessage, b.handleSendReplyMessage)
	r.Handle(codec.RequestSendReplyMessageV2, b.handleSendReplyMessage)
	r.Handle(codec.RequestRecallMessage, b.handleRecallMessage)
	r.Handle(codec.RequestPullMessage, b.handlePullMessage)
	r.Handle(codec.RequestLitePullMessage, b.handlePullMessage)
	r.Handle(codec.RequestConsumerSendMsgBack, b.handleConsumerSendMsgBack)
	r.Handle(codec.RequestEndTransaction, b.handleEndTransaction)
	r.Handle(codec.RequestPopMessage, b.handlePopMessage)
	r.Handle(codec.RequestAckMessage, b.handleAckMessage)
	r.Handle(codec.RequestBatchAckMessage, b.handleBatchAckMessage)
	r.Handle(codec.RequestChangeMessageInvisibleTime, b.handleChangeInvisibleTime)
	r.Handle(codec.RequestNotification, b.handleNotification)
	r.Handle(codec.RequestHeartBeat, b.handleHeartBeat)
	r.Handle(codec.RequestCheckClientConfig, b.handleCheckClientConfig)
	r.Handle(codec.RequestUnregisterClient, b.handleUnregisterClient)
	r.Handle(codec.RequestGetConsumerListByGroup, b.handleGetConsumerListByGroup)
	r.Handle(codec.RequestLockBatchMQ, b.handleLockBatchMQ)
	r.Handle(codec.RequestUnlockBatchMQ, b.handleUnlockBatchMQ)
	r.Handle(codec.RequestQueryAssignment, b.handleQueryAssignment)
	r.Handle(codec.RequestSetMessageRequestMode, b.handleSetMessageRequestMode)
	r.Handle(codec.RequestQueryConsumerOffset, b.handleQueryConsumerOffset)
	r.Handle(codec.RequestUpdateConsumerOffset, b.handleUpdateConsumerOffset)
	r.Handle(codec.RequestGetMaxOffset, b.handleGetMaxOffset)
	r.Handle(codec.RequestGetMinOffset, b.handleGetMinOffset)
	r.Handle(codec.RequestSearchOffsetByTimestamp, b.handleSearchOffsetByTimestamp)
	r.Handle(codec.RequestInvokeBrokerToResetOffset, b.handleInvokeBrokerToResetOffset)
	r.Handle(codec.RequestGetEarliestMsgStoreTime, b.handleGetEarliestMsgStoretime)
	r.Handle(codec.RequestUpdateAndCreateTopic, b.handleUpdateAndCreateTopic)
	r.Handle(codec.RequestGetTopicConfig, b.handleGetTopicConfig)
	r.Handle(codec.RequestDeleteTopicInBroker, b.handleDeleteTopicInBroker)
	r.Handle(codec.RequestGetAllTopicConfig, b.tableReply(b.handleGetAllTopicConfig))
	r.Handle(codec.RequestUpdateAndCreateSubscriptionGroup, b.handleUpdateAndCreateSubscriptionGroup)
	r.Handle(codec.RequestUpdateAndCreateSubscriptionGroupList, b.handleUpdateAndCreateSubscriptionGroupList)
	r.Handle(codec.RequestGetAllSubscriptionGroupConfig, b.tableReply(b.handleGetAllSubscriptionGroupConfig))
	r.Handle(codec.RequestGetSubscriptionGroupConfig, b.handleGetSubscriptionGroupConfig)
	r.Handle(codec.RequestDeleteSubscriptionGroup, b.handleDeleteSubscriptionGroup)
	r.Handle(codec.RequestDeleteSubscriptionGroupList, b.handleDeleteSubscriptionGroupList)
	r.Handle(codec.RequestGetBrokerRuntimeInfo, b.handleGetBrokerRuntimeInfo)
	r.Handle(codec.RequestViewMessageByID, b.largeReply(b.handleViewMessageByID))
	r.Handle(codec.RequestQueryMessage, b.largeReply(b.handleQueryMessage))
	r.Handle(requestViewBrokerStatsData, b.handleViewBrokerStatsData)
	r.Handle(codec.RequestGetTopicStatsInfo, b.largeReply(b.handleGetTopicStatsInfo))
	r.Handle(codec.RequestGetConsumeStats, b.largeReply(b.handleGetConsumeStats))
	r.Handle(codec.RequestGetConsumerConnectionList, b.largeReply(b.handleGetConsumerConnectionList))
	r.Handle(codec.RequestGetProducerConnectionList, b.largeReply(b.handleGetProducerConnectionList))
	r.Handle(codec.RequestGetAllProducerInfo, b.tableReply(b.handleGetAllProducerInfo))
	r.Handle(codec.RequestGetBrokerConfig, b.handleGetBrokerConfig)
	r.Handle(codec.RequestUpdateAndCreateTopicList, b.handleUpdateAndCreateTopicList)
	r.Handle(codec.RequestQueryTopicConsumeByWho, b.tableReply(b.handleQueryTopicConsumeByWho))
	r.Handle(codec.RequestGetSystemTopicListFromBroker, b.largeReply(b.handleGetSystemTopicListFromBroker))
	r.Handle(auth.RequestCreateUser, b.handleAuthCreateUser)
	r.Handle(auth.RequestUpdateUser, b.handleAuthUpdateUser)
	r.Handle(auth.RequestDeleteUser, b.handleAuthDeleteUser)
	r.Handle(auth.RequestGetUser, b.handleAuthGetUser)
	r.Handle(auth.RequestListUser, b.handleAuthListUser)
	r.Handle(auth.RequestCreateACL, b.handleAuthPutACL)
	r.Handle(auth.RequestUpdateACL, b.handleAuthPutACL)
	r.Handle(auth.RequestDeleteACL, b.handleAuthDeleteACL)
	r.Handle(auth.RequestGetACL, b.handleAuthGetACL)
	r.Handle(auth.RequestListACL, b.handleAuthListACL)
	r.Handle(codec.RequestCleanExpiredConsumeQueue, b.handleCleanExpiredConsumeQueue)
	r.Handle(codec.RequestGetConsumerRunningInfo, b.handleGetConsumerRunningInfo)
	r.Handle(codec.RequestConsumeMessageDirectly, b.handleConsumeMessageDirectly)
	r.Handle(codec.RequestGetBrokerConsumeStats, b.largeReply(b.handleGetBrokerConsumeStats))
	r.Handle(codec.RequestUpdateBrokerConfig, b.handleUpdateBrokerConfig)
	r.Handle(codec.RequestQueryConsumeQueue, b.largeReply(b.handleQueryConsumeQueue))
}

// RegisterNameServer fills the name-server port's dispatch table (the
// embedded name server: routes and cluster info). One line per code.
func RegisterNameServer(r *remoting.Router, b *Broker) {
	r.Handle(codec.RequestGetRouteInfoByTopic, b.handleGetRouteInfoByTopic)
	r.Handle(codec.RequestGetBrokerClusterInfo, b.handleGetBrokerClusterInfo)
	r.Handle(requestGetKVConfig, b.handleGetKVConfig)
	r.Handle(requestDeleteKVConfig, b.handleDeleteKVConfig)
	r.Handle(codec.RequestPutKVConfig, b.handlePutKVConfig)
	r.Handle(codec.RequestGetAllTopicListFromNameServer, b.handleGetAllTopicListFromNameserver)
	r.Handle(codec.RequestDeleteTopicInNamesrv, b.handleDeleteTopicInNamesrv)
}
