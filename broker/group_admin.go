package broker

// Subscription-group administration: UpdateSubscriptionGroups
// (UPDATE_AND_CREATE_SUBSCRIPTIONGROUP 200 and its _LIST form 225) and
// DeleteSubscriptionGroups (DELETE_SUBSCRIPTIONGROUP 207 and
// DELETE_SUBSCRIPTION_GROUP_LIST 5003);
// broker/.../processor/AdminBrokerProcessor.java with
// SubscriptionGroupManager.updateSubscriptionGroupConfig and
// deleteSubscriptionGroupConfig.
//
// UpdateSubscriptionGroups:
//   - Every group name is checked first as TopicValidator.validateGroup
//     (meta.ValidateGroupName); the first illegal one refuses the request
//     and nothing is written.
//   - Each stored configuration is replaced wholesale by its new one; only
//     attributes are merged: "+key" sets, "-key" removes (the key must
//     exist), a new group accepts only "+"
//     (codec.ApplySubscriptionGroupAttributes).
//   - All configurations go in one write through the writer (background
//     lane), durable together or not at all; the answer waits until it is
//     fsynced, and POP, PULL, NOTIFICATION, HEART_BEAT, revive and
//     GET_SUBSCRIPTIONGROUP_CONFIG see the new values from then on.
//   - An empty list stores nothing and answers SUCCESS, as a Java broker
//     does for an empty body.
//   - Response codes: SUCCESS (0); INVALID_PARAMETER (29) for an illegal
//     group name, with the Java broker's remark ("The specified group is
//     blank.", "The specified group: <g>, contains illegal characters,
//     allowing only ^[%|a-zA-Z0-9_-]+$", "The specified group: <g>, is
//     longer than group max length: 120"); SYSTEM_ERROR (1) for a refused
//     attribute operation (as the exception a Java broker throws) or a
//     failed write ("write failed: <cause>"); SYSTEM_BUSY (2) when the lane
//     is full.
//
// DeleteSubscriptionGroups:
//   - The groups' configurations are removed in one write; with
//     CleanOffset their committed consume offsets on every topic go in the
//     same write (mqadmin deleteSubGroup -r true). Their checkpoints,
//     %RETRY% and %DLQ% topics stay, as on a Java broker (mqadmin
//     deleteSubGroup -c deletes those topics with separate requests).
//   - A missing group is not an error: SUCCESS all the same.
//   - The answer waits until the write is fsynced. With
//     --auto-create-subscription-group on, the next HEART_BEAT, POP, PULL or
//     GET_SUBSCRIPTIONGROUP_CONFIG of the group creates it again with the
//     defaults, as in RocketMQ.
//   - Response codes: SUCCESS (0); INVALID_PARAMETER (29) "groupNameList is
//     empty" for no names; SYSTEM_ERROR (1) for a failed write;
//     SYSTEM_BUSY (2) when the lane is full.

import (
	"errors"

	"github.com/popshim/popshim/broker/meta"
	"github.com/popshim/popshim/codec"
)

// UpdateSubscriptionGroupsRequest holds the configurations to create or
// replace (subscription/SubscriptionGroupConfig.java; attribute keys carry
// their "+"/"-" operation).
type UpdateSubscriptionGroupsRequest struct {
	Configs []codec.SubscriptionGroupConfig
}

// DeleteSubscriptionGroupsRequest names the groups to delete
// (header/DeleteSubscriptionGroupRequestHeader.java: groupName,
// cleanOffset; body of 5003: groupNameList, cleanOffset).
type DeleteSubscriptionGroupsRequest struct {
	Groups      []string
	CleanOffset bool // also remove the groups' committed consume offsets
}

// UpdateSubscriptionGroups validates r and writes its configurations; done
// gets nil once they are durable, or an *Error with the codes above: on
// the caller's goroutine for a refusal, else on the writer's completer.
// r.Configs must not be modified afterwards. Any goroutine; never blocks.
func (b *Broker) UpdateSubscriptionGroups(r UpdateSubscriptionGroupsRequest, done func(error)) {
	if len(r.Configs) == 0 {
		done(nil)
		return
	}
	err := b.Groups.Put(r.Configs, func(err error) {
		if errors.Is(err, codec.ErrBadAttribute) {
			done(&Error{Code: codec.SystemError, Remark: err.Error()})
			return
		}
		done(adminWriteErr(err))
	})
	var nameErr *meta.GroupNameError
	switch {
	case err == nil:
	case errors.As(err, &nameErr):
		done(&Error{Code: codec.InvalidParameter, Remark: nameErr.Remark})
	default:
		done(SubmitError("", err))
	}
}

// DeleteSubscriptionGroups removes r.Groups; done gets nil once the
// deletion is durable, or an *Error with the codes above: on the caller's
// goroutine for a refusal, else on the writer's completer. r.Groups must
// not be modified afterwards. Any goroutine; never blocks.
func (b *Broker) DeleteSubscriptionGroups(r DeleteSubscriptionGroupsRequest, done func(error)) {
	if len(r.Groups) == 0 {
		done(&Error{Code: codec.InvalidParameter, Remark: "groupNameList is empty"})
		return
	}
	if err := b.Groups.Delete(r.Groups, r.CleanOffset, func(err error) { done(adminWriteErr(err)) }); err != nil {
		done(SubmitError("", err))
	}
}
