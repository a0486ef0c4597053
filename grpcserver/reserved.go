package grpcserver

import (
	"strings"

	"github.com/popshim/popshim/codec"
)

// reservedProperties are the property names a v5 producer may not set as
// user properties and a v5 consumer is not shown as user properties:
// MessageConst.STRING_HASH_SET
// (common/src/main/java/org/apache/rocketmq/common/message/MessageConst.java).
var reservedProperties = map[string]bool{
	codec.PropertyTraceSwitch: true, codec.PropertyMsgRegion: true, codec.PropertyKeys: true,
	codec.PropertyTags: true, codec.PropertyWaitStoreMsgOK: true, codec.PropertyDelayTimeLevel: true,
	codec.PropertyRetryTopic: true, codec.PropertyRealTopic: true, codec.PropertyRealQueueID: true,
	codec.PropertyTransactionPrepared: true, codec.PropertyProducerGroup: true, codec.PropertyMinOffset: true,
	codec.PropertyMaxOffset: true, codec.PropertyBuyerID: true, codec.PropertyOriginMessageID: true,
	codec.PropertyTransferFlag: true, codec.PropertyCorrectionFlag: true, codec.PropertyMQ2Flag: true,
	codec.PropertyReconsumeTime: true, codec.PropertyUniqClientMessageIDKeyIdx: true,
	codec.PropertyMaxReconsumeTimes: true, codec.PropertyConsumeStartTimestamp: true, codec.PropertyPopCK: true,
	codec.PropertyPopCKOffset: true, codec.PropertyFirstPopTime: true, codec.PropertyTranPreparedQueueOffset: true,
	codec.PropertyDupInfo: true, codec.PropertyExtendUniqInfo: true, codec.PropertyInstanceID: true,
	codec.PropertyCorrelationID: true, codec.PropertyMessageReplyToClient: true, codec.PropertyMessageTTL: true,
	codec.PropertyReplyMessageArriveTime: true, codec.PropertyPushReplyTime: true, codec.PropertyCluster: true,
	codec.PropertyMessageType: true, codec.PropertyInnerMultiQueueOffset: true, codec.PropertyTimerDelayMS: true,
	codec.PropertyTimerDelaySec: true, codec.PropertyTimerDeliverMS: true, codec.PropertyTimerEnqueueMS: true,
	codec.PropertyTimerDequeueMS: true, codec.PropertyTimerRollTimes: true, codec.PropertyTimerOutMS: true,
	codec.PropertyTimerDelUniqKey: true, codec.PropertyTimerDelayLevel: true, codec.PropertyBornHost: true,
	codec.PropertyBornTimestamp: true, codec.PropertyDLQOriginTopic: true, codec.PropertyDLQOriginMessageID: true,
	codec.PropertyCRC32: true,
}

// shownAsSystemProperty are stored properties that a v5 Message carries in
// SystemProperties (message_group, trace_context, the transaction check
// time) and that popshim therefore leaves out of user_properties. The proxy
// copies them into user_properties as well (they are not in
// STRING_HASH_SET), so a v5 producer could not send the message back with
// them; popshim does not repeat that.
var shownAsSystemProperty = map[string]bool{
	codec.PropertyShardingKey:                true,
	codec.PropertyTraceContext:               true,
	codec.PropertyCheckImmunityTimeInSeconds: true,
}

// IsReservedProperty reports whether name is a RocketMQ system property
// name that a v5 producer may not use as a user property (SendMessage
// answers ILLEGAL_MESSAGE_PROPERTY_KEY), or a broker-internal transient
// one (__RMQ.TRANSIENT.*). Safe for concurrent use.
func IsReservedProperty(name string) bool {
	return reservedProperties[name] || strings.HasPrefix(name, codec.PropertyTransientPrefix)
}
