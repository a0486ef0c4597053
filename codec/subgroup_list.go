package codec

import (
	"encoding/json"
	"fmt"
)

// Bodies of the list forms of the subscription-group admin requests.

// DecodeSubscriptionGroupList parses the body of
// UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST (225,
// remoting/.../protocol/body/SubscriptionGroupList.java):
// {"groupConfigList":[SubscriptionGroupConfig...]}. Each element is read
// as DecodeSubscriptionGroupConfig reads a 200 body; a null element is
// skipped. An empty body, JSON null or a missing/null list gives no
// configs and no error. Errors wrap ErrInvalidField. Shares no memory with
// b. Any goroutine.
func DecodeSubscriptionGroupList(b []byte) ([]SubscriptionGroupConfig, error) {
	m, err := rawObject("subscription group list", b)
	if err != nil || m == nil {
		return nil, err
	}
	raw, ok := m["groupConfigList"]
	if !ok || isNull(raw) {
		return nil, nil
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, fmt.Errorf("%w: groupConfigList: %v", ErrInvalidField, err)
	}
	out := make([]SubscriptionGroupConfig, 0, len(elems))
	for i, e := range elems {
		if isNull(e) {
			continue
		}
		c, err := DecodeSubscriptionGroupConfig(e)
		if err != nil {
			return nil, fmt.Errorf("groupConfigList[%d]: %w", i, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// DeleteSubscriptionGroupList is the body of DELETE_SUBSCRIPTION_GROUP_LIST
// (5003, remoting/.../protocol/body/DeleteSubscriptionGroupListBody.java
// in 5.5): the groups to delete and whether their consume offsets go too.
type DeleteSubscriptionGroupList struct {
	GroupNameList []string
	CleanOffset   bool
}

// DecodeDeleteSubscriptionGroupList parses a 5003 body
// {"groupNameList":[...],"cleanOffset":bool}; absent members read as
// empty/false, cleanOffset as fastjson2 reads a boolean (also "true", 1).
// Errors wrap ErrInvalidField. Any goroutine.
func DecodeDeleteSubscriptionGroupList(b []byte) (DeleteSubscriptionGroupList, error) {
	var out DeleteSubscriptionGroupList
	m, err := rawObject("delete subscription group list", b)
	if err != nil || m == nil {
		return out, err
	}
	if raw, ok := m["groupNameList"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &out.GroupNameList); err != nil {
			return out, fmt.Errorf("%w: groupNameList: %v", ErrInvalidField, err)
		}
	}
	if raw, ok := m["cleanOffset"]; ok {
		if err := rawBool(raw, &out.CleanOffset); err != nil {
			return out, fmt.Errorf("%w: cleanOffset: %v", ErrInvalidField, err)
		}
	}
	return out, nil
}

// AppendSubscriptionGroupList appends a 225 body for cs (tests and tools).
func AppendSubscriptionGroupList(dst []byte, cs []SubscriptionGroupConfig) []byte {
	dst = append(dst, `{"groupConfigList":[`...)
	for i := range cs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendSubscriptionGroupConfig(dst, &cs[i])
	}
	return append(dst, "]}"...)
}
