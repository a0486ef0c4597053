package auth

import (
	"strings"
)

// User is one ACL 2.0 user: Username is the AccessKey a client sends,
// Password the SecretKey it signs with. Type is "Super" or "Normal", Status
// "enable" or "disable" (auth/.../authentication/enums/UserType.java,
// UserStatus.java). JSON names are those of UserInfo
// (remoting/.../protocol/body/UserInfo.java), the body of
// AUTH_CREATE_USER (3001) and AUTH_UPDATE_USER (3002).
type User struct {
	Username string `json:"username"`
	Password string `json:"password,omitempty"`
	Type     string `json:"userType,omitempty"`
	Status   string `json:"userStatus,omitempty"`
}

// User types and statuses, spelled as RocketMQ's enums name them.
const (
	UserSuper   = "Super"
	UserNormal  = "Normal"
	UserEnable  = "enable"
	UserDisable = "disable"
)

// Resource types, as named by common/.../resource/ResourceType.java.
const (
	ResAny     = "Any"
	ResCluster = "Cluster"
	ResTopic   = "Topic"
	ResGroup   = "Group"
)

// Resource patterns (common/.../resource/ResourcePattern.java).
const (
	PatAny     = "ANY"
	PatLiteral = "LITERAL"
	PatPrefix  = "PREFIXED"
)

// Resource is what a policy entry or a request names: Type one of the
// Res* constants, Pattern one of the Pat* constants, Name the literal name
// or the prefix (empty for ANY).
type Resource struct {
	Type    string
	Name    string
	Pattern string
}

// ParseResource reads a resource key as mqadmin writes it ("*",
// "Topic:*", "Topic:abc", "Topic:ab*", "Group:g"), as Resource.of(String)
// in auth/.../authorization/model/Resource.java. The type is matched
// without regard to case. ok is false for an empty key or an unknown type.
func ParseResource(key string) (Resource, bool) {
	if strings.TrimSpace(key) == "" {
		return Resource{}, false
	}
	if key == "*" {
		return Resource{Type: ResAny, Pattern: PatAny}, true
	}
	typ, name, _ := strings.Cut(key, ":")
	switch strings.ToLower(typ) {
	case "any":
		typ = ResAny
	case "cluster":
		typ = ResCluster
	case "topic":
		typ = ResTopic
	case "group":
		typ = ResGroup
	case "namespace":
		typ = "Namespace"
	default:
		return Resource{}, false
	}
	switch {
	case name == "*":
		return Resource{Type: typ, Pattern: PatAny}, true
	case strings.HasSuffix(name, "*"):
		return Resource{Type: typ, Name: name[:strings.IndexByte(name, '*')], Pattern: PatPrefix}, true
	}
	return Resource{Type: typ, Name: name, Pattern: PatLiteral}, true
}

// Key is the resource's key as RocketMQ prints it in remarks and in
// AUTH_GET_ACL answers: "*", "Topic:*", "Topic:abc", "Topic:ab*".
func (r Resource) Key() string {
	if r.Type == ResAny {
		return "*"
	}
	switch r.Pattern {
	case PatAny:
		return r.Type + ":*"
	case PatPrefix:
		return r.Type + ":" + r.Name + "*"
	}
	return r.Type + ":" + r.Name
}

// matches reports whether the policy resource r covers the requested
// literal resource q (Resource.isMatch).
func (r Resource) matches(q Resource) bool {
	if r.Type == ResAny {
		return true
	}
	if r.Type != q.Type {
		return false
	}
	switch r.Pattern {
	case PatAny:
		return true
	case PatLiteral:
		return q.Name == r.Name
	case PatPrefix:
		return strings.HasPrefix(q.Name, r.Name)
	}
	return false
}

// Action is one ACL 2.0 action bit (common/.../action/Action.java names).
type Action uint16

// Actions. ActAny is only ever asked for, never granted.
const (
	ActAll Action = 1 << iota
	ActAny
	ActPub
	ActSub
	ActCreate
	ActUpdate
	ActDelete
	ActGet
	ActList
)

var actionNames = [...]struct {
	a    Action
	name string
}{
	{ActAll, "All"}, {ActAny, "Any"}, {ActPub, "Pub"}, {ActSub, "Sub"}, {ActCreate, "Create"},
	{ActUpdate, "Update"}, {ActDelete, "Delete"}, {ActGet, "Get"}, {ActList, "List"},
}

// ParseAction reads an action name without regard to case; 0 when unknown
// (Action.getByName, which mqadmin's converter skips).
func ParseAction(s string) Action {
	for _, n := range actionNames {
		if strings.EqualFold(n.name, s) {
			return n.a
		}
	}
	return 0
}

// Names lists the action names set in a, in RocketMQ's order.
func (a Action) Names() []string {
	var out []string
	for _, n := range actionNames {
		if a&n.a != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

// Decisions and policy types (auth/.../authorization/enums).
const (
	Allow         = "Allow"
	Deny          = "Deny"
	PolicyCustom  = "Custom"
	PolicyDefault = "Default"
)

// Entry is one policy entry: a resource, the actions it grants or denies,
// the source IP ranges it applies to (empty: any) and the decision.
type Entry struct {
	Resource  Resource
	Actions   Action
	SourceIPs []string
	Decision  string
}

// Policy is the entries of one policy type of an ACL.
type Policy struct {
	Type    string
	Entries []Entry
}

// ACL is one subject's policies; Subject is "User:<name>".
type ACL struct {
	Subject  string
	Policies []Policy
}

// policy returns the policy of type typ, or nil.
func (a *ACL) policy(typ string) *Policy {
	for i := range a.Policies {
		if a.Policies[i].Type == typ {
			return &a.Policies[i]
		}
	}
	return nil
}

// merge folds ps into a as Acl.updatePolicy does: an entry for an existing
// resource of the same policy type is replaced, other entries are added.
func (a *ACL) merge(ps []Policy) {
	for _, np := range ps {
		old := a.policy(np.Type)
		if old == nil {
			a.Policies = append(a.Policies, clonePolicy(np))
			continue
		}
		for _, ne := range np.Entries {
			replaced := false
			for i := range old.Entries {
				if old.Entries[i].Resource == ne.Resource {
					old.Entries[i] = ne
					replaced = true
					break
				}
			}
			if !replaced {
				old.Entries = append(old.Entries, ne)
			}
		}
	}
}

// deleteEntry removes the entry for res from policy typ; a policy left
// empty is removed (Acl.deletePolicy).
func (a *ACL) deleteEntry(typ string, res Resource) {
	for pi := range a.Policies {
		p := &a.Policies[pi]
		if p.Type != typ {
			continue
		}
		for i := range p.Entries {
			if p.Entries[i].Resource == res {
				p.Entries = append(p.Entries[:i:i], p.Entries[i+1:]...)
				break
			}
		}
		if len(p.Entries) == 0 {
			a.Policies = append(a.Policies[:pi:pi], a.Policies[pi+1:]...)
		}
		return
	}
}

func clonePolicy(p Policy) Policy {
	p.Entries = append([]Entry(nil), p.Entries...)
	return p
}

func (a ACL) clone() ACL {
	ps := make([]Policy, len(a.Policies))
	for i, p := range a.Policies {
		ps[i] = clonePolicy(p)
	}
	a.Policies = ps
	return a
}
