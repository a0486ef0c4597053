package remoting

import "github.com/popshim/popshim/codec"

// VersionV5_3_1 is MQVersion.Version.V5_3_1.ordinal() (475), from
// common/src/main/java/org/apache/rocketmq/common/MQVersion.java. A Java
// 5.x broker shutting down answers GO_AWAY only to requests whose version
// field (RemotingCommand.version) is above it
// (NettyRemotingAbstract.processRequestCommand); clients at or below it
// predate the code.
const VersionV5_3_1 int32 = 475

// goAwayRemark is the remark of a GO_AWAY answer.
const goAwayRemark = "broker is shutting down; reconnect and retry elsewhere"

// SupportsGoAway reports whether a request with this version field may be
// answered GO_AWAY (1500): version > VersionV5_3_1. Such a Java client
// (NettyRemotingClient.invokeImpl) replaces the channel and sends the
// request once more on a new connection; a second GO_AWAY fails the call,
// and a producer then retries on another broker (GO_AWAY is in
// DefaultMQProducer's retry codes). Pure; any goroutine.
func SupportsGoAway(version int32) bool { return version > VersionV5_3_1 }

// forClient adapts a response to the client that sent the request: a
// GO_AWAY (1500) response to a client at or below V5_3_1 becomes
// SYSTEM_BUSY (2) with the same remark, the code a Java broker answers when
// its request executors are already shut down, which such clients treat as
// "not done, try again or elsewhere". Anything else is returned as is. resp
// is never modified (the caller may reuse it); a copy is made when needed.
func forClient(resp *codec.Command, version int32) *codec.Command {
	if resp.Code != codec.GoAway || SupportsGoAway(version) {
		return resp
	}
	old := *resp
	old.Code = codec.SystemBusy
	return &old
}
