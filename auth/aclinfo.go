package auth

import (
	"errors"
	"strings"
)

// AclInfo is the JSON of one subject's ACL on the wire: the body of
// AUTH_CREATE_ACL (3006) and AUTH_UPDATE_ACL (3007), the answer of
// AUTH_GET_ACL (3009) and the elements of AUTH_LIST_ACL (3010)
// (remoting/.../protocol/body/AclInfo.java). popshim stores ACLs durably in
// this form too.
type AclInfo struct {
	Subject  string       `json:"subject,omitempty"`
	Policies []PolicyInfo `json:"policies,omitempty"`
}

// PolicyInfo is AclInfo.PolicyInfo: a policy type ("Custom" when empty)
// and its entries.
type PolicyInfo struct {
	PolicyType string      `json:"policyType,omitempty"`
	Entries    []EntryInfo `json:"entries,omitempty"`
}

// EntryInfo is AclInfo.PolicyEntryInfo: resource key ("Topic:t", "Group:g*",
// "*"), action names, source IPs or CIDRs, decision "Allow" or "Deny".
type EntryInfo struct {
	Resource  string   `json:"resource,omitempty"`
	Actions   []string `json:"actions,omitempty"`
	SourceIPs []string `json:"sourceIps,omitempty"`
	Decision  string   `json:"decision,omitempty"`
}

// Error is a refusal RocketMQ raises as AuthenticationException or
// AuthorizationException: the broker answers NO_PERMISSION (16) with the
// message as remark.
type Error struct{ Msg string }

// Error returns the remark RocketMQ sends with NO_PERMISSION (16).
func (e *Error) Error() string { return e.Msg }

func denied(msg string) error { return &Error{Msg: msg} }

// IsDenied reports whether err is an *Error (answer NO_PERMISSION with its
// message) rather than a storage or queueing failure.
func IsDenied(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// toACL converts and validates info as AclConverter.convertAcl and
// AuthorizationMetadataManagerImpl.validate do; subject is used when info
// names none. The errors are *Error with RocketMQ's messages.
func (info *AclInfo) toACL(subject string) (ACL, error) {
	if info.Subject != "" {
		subject = info.Subject
	}
	typ, name, _ := strings.Cut(subject, ":")
	if typ != "User" || name == "" {
		return ACL{}, denied("The subject type is null.")
	}
	if len(info.Policies) == 0 {
		return ACL{}, denied("The policies is empty.")
	}
	acl := ACL{Subject: "User:" + name}
	for _, pi := range info.Policies {
		if len(pi.Entries) == 0 {
			return ACL{}, denied("The policy entries is empty.")
		}
		p := Policy{Type: PolicyCustom}
		if strings.EqualFold(pi.PolicyType, PolicyDefault) {
			p.Type = PolicyDefault
		}
		for _, ei := range pi.Entries {
			e, err := ei.toEntry()
			if err != nil {
				return ACL{}, err
			}
			p.Entries = append(p.Entries, e)
		}
		acl.Policies = append(acl.Policies, p)
	}
	return acl, nil
}

func (ei EntryInfo) toEntry() (Entry, error) {
	res, ok := ParseResource(ei.Resource)
	if !ok {
		return Entry{}, denied("The resource is null.")
	}
	var acts Action
	for _, a := range ei.Actions {
		acts |= ParseAction(a)
	}
	if acts == 0 {
		return Entry{}, denied("The actions is empty.")
	}
	if acts&ActAny != 0 {
		return Entry{}, denied("The actions can not be Any.")
	}
	for _, ip := range ei.SourceIPs {
		if strings.TrimSpace(ip) == "" {
			return Entry{}, denied("The source ip is empty.")
		}
		if !validIPOrCIDR(ip) {
			return Entry{}, denied("The source ip is invalid.")
		}
	}
	e := Entry{Resource: res, Actions: acts, SourceIPs: append([]string(nil), ei.SourceIPs...)}
	switch {
	case strings.EqualFold(ei.Decision, Allow):
		e.Decision = Allow
	case strings.EqualFold(ei.Decision, Deny):
		e.Decision = Deny
	default:
		return Entry{}, denied("The decision is null or illegal.")
	}
	return e, nil
}

// info converts an ACL back to its wire form (AclConverter.convertAcl).
func (a ACL) info() AclInfo {
	out := AclInfo{Subject: a.Subject}
	for _, p := range a.Policies {
		pi := PolicyInfo{PolicyType: p.Type}
		for _, e := range p.Entries {
			pi.Entries = append(pi.Entries, EntryInfo{Resource: e.Resource.Key(), Actions: e.Actions.Names(),
				SourceIPs: e.SourceIPs, Decision: e.Decision})
		}
		out.Policies = append(out.Policies, pi)
	}
	return out
}
