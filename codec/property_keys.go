package codec

// Message property keys (common/src/main/java/org/apache/rocketmq/common/message/MessageConst.java).
// Properties travel as the string described at DecodeProperties.
const (
	PropertyKeys                       = "KEYS"                // business keys, space-separated
	PropertyTags                       = "TAGS"                // tag used for TAG filtering
	PropertyWaitStoreMsgOK             = "WAIT"                // "true"/"false": producer waits for store
	PropertyDelayTimeLevel             = "DELAY"               // delay level, 1-based
	PropertyRetryTopic                 = "RETRY_TOPIC"         // original topic of a retried message
	PropertyRealTopic                  = "REAL_TOPIC"          // original topic of delayed / half messages
	PropertyRealQueueID                = "REAL_QID"            // original queue of delayed / half messages
	PropertyTransactionPrepared        = "TRAN_MSG"            // "true" for half messages
	PropertyProducerGroup              = "PGROUP"              // producer group (transactions)
	PropertyMinOffset                  = "MIN_OFFSET"          // added client-side after pull
	PropertyMaxOffset                  = "MAX_OFFSET"          // added client-side after pull
	PropertyBuyerID                    = "BUYER_ID"            //
	PropertyOriginMessageID            = "ORIGIN_MESSAGE_ID"   // offsetMsgId of the first delivery
	PropertyTransferFlag               = "TRANSFER_FLAG"       // legacy
	PropertyCorrectionFlag             = "CORRECTION_FLAG"     // legacy
	PropertyMQ2Flag                    = "MQ2_FLAG"            // legacy
	PropertyReconsumeTime              = "RECONSUME_TIME"      // reconsume count when re-sent as a normal message
	PropertyMsgRegion                  = "MSG_REGION"          // region id (also a SEND response ext field)
	PropertyTraceSwitch                = "TRACE_ON"            // trace switch (also a SEND response ext field)
	PropertyUniqClientMessageIDKeyIdx  = "UNIQ_KEY"            // client message id (the application's msgId)
	PropertyExtendUniqInfo             = "EXTEND_UNIQ_INFO"    //
	PropertyMaxReconsumeTimes          = "MAX_RECONSUME_TIMES" // per-message retry limit
	PropertyConsumeStartTimestamp      = "CONSUME_START_TIME"  // client-side
	PropertyInnerNum                   = "INNER_NUM"           // inner-batch bookkeeping
	PropertyInnerBase                  = "INNER_BASE"          // inner-batch bookkeeping
	PropertyDupInfo                    = "DUP_INFO"            //
	PropertyCheckImmunityTimeInSeconds = "CHECK_IMMUNITY_TIME_IN_SECONDS"
	PropertyTranPreparedQueueOffset    = "TRAN_PREPARED_QUEUE_OFFSET"
	PropertyTransactionCheckTimes      = "TRANSACTION_CHECK_TIMES"
	PropertyTransactionID              = "__transactionId__"
	PropertyInstanceID                 = "INSTANCE_ID"
	PropertyCorrelationID              = "CORRELATION_ID"  // request/reply
	PropertyMessageReplyToClient       = "REPLY_TO_CLIENT" // request/reply
	PropertyMessageTTL                 = "TTL"             // request/reply
	PropertyReplyMessageArriveTime     = "ARRIVE_TIME"     // request/reply
	PropertyPushReplyTime              = "PUSH_REPLY_TIME" // request/reply
	PropertyMessageType                = "MSG_TYPE"        // "reply" for reply messages
	PropertyCluster                    = "CLUSTER"         // cluster name, added by the broker on store
	PropertyPopCK                      = "POP_CK"          // the receipt handle (extraInfo)
	PropertyPopCKOffset                = "POP_CK_OFFSET"   // defined, unused by Java
	PropertyFirstPopTime               = "1ST_POP_TIME"    // first pop time, milliseconds
	PropertyShardingKey                = "__SHARDINGKEY"   // ordered-message sharding key (Java)
	PropertyShardingKeyGo              = "SHARDING_KEY"    // the Go client's spelling of the sharding key
	PropertyForwardQueueID             = "PROPERTY_FORWARD_QUEUE_ID"
	PropertyRedirect                   = "REDIRECT"
	PropertyInnerMultiDispatch         = "INNER_MULTI_DISPATCH"     // LMQ, comma-separated
	PropertyInnerMultiQueueOffset      = "INNER_MULTI_QUEUE_OFFSET" // LMQ, comma-separated
	PropertyTraceContext               = "TRACE_CONTEXT"
	PropertyTimerDelaySec              = "TIMER_DELAY_SEC"
	PropertyTimerDeliverMS             = "TIMER_DELIVER_MS"
	PropertyTimerDelayMS               = "TIMER_DELAY_MS"
	PropertyTimerEnqueueMS             = "TIMER_ENQUEUE_MS"
	PropertyTimerDequeueMS             = "TIMER_DEQUEUE_MS"
	PropertyTimerRollTimes             = "TIMER_ROLL_TIMES"
	PropertyTimerOutMS                 = "TIMER_OUT_MS"
	PropertyTimerDelUniqKey            = "TIMER_DEL_UNIQKEY"
	PropertyTimerDelayLevel            = "TIMER_DELAY_LEVEL"
	PropertyBornHost                   = "__BORNHOST"
	PropertyBornTimestamp              = "BORN_TIMESTAMP"
	PropertyTransientPrefix            = "__RMQ.TRANSIENT." // broker-internal, never stored
	PropertyCRC32                      = "__CRC32#"         // optional stored CRC
	PropertyDLQOriginTopic             = "DLQ_ORIGIN_TOPIC"
	PropertyDLQOriginMessageID         = "DLQ_ORIGIN_MESSAGE_ID"
	PropertyStartDeliverTime           = "__STARTDELIVERTIME" // legacy delivery time
)

// Separators of the properties string (MessageDecoder.NAME_VALUE_SEPARATOR
// and PROPERTY_SEPARATOR).
const (
	PropertyNameValueSeparator byte = 0x01
	PropertySeparator          byte = 0x02
)
