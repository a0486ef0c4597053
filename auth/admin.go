package auth

import (
	"slices"
	"strings"
)

// notSuper reports whether caller (the AccessKey of an admin request) is
// a known user that is not a super user. No AccessKey (authentication off)
// counts as super, as AdminBrokerProcessor.isNotSuperUserLogin does.
func (s *state) notSuper(caller string) bool {
	if caller == "" {
		return false
	}
	u, ok := s.users[caller]
	return !ok || u.Type != UserSuper
}

// normType returns RocketMQ's spelling of a user type or status name, or
// "" when unknown (the converters' getByName returns null).
func normType(s string) string {
	for _, n := range [...]string{UserSuper, UserNormal, UserEnable, UserDisable} {
		if strings.EqualFold(s, n) {
			return n
		}
	}
	return ""
}

// ErrSuperOnly is the remark of AUTH_CREATE_USER / AUTH_UPDATE_USER when a
// normal user asks for a super user; the broker answers SYSTEM_ERROR (1).
type ErrSuperOnly struct{ Verb string }

// Error returns AdminBrokerProcessor's remark, sent with SYSTEM_ERROR (1).
func (e ErrSuperOnly) Error() string {
	return "The super user can only be " + e.Verb + " by super user"
}

// CreateUser stores u (AUTH_CREATE_USER 3001) as
// AuthenticationMetadataManagerImpl.createUser does: type defaults to
// Normal, status to enable; a blank password or an existing user is
// refused with an *Error. A super user may only be created by a super user
// (caller is the request's AccessKey): ErrSuperOnly, returned at once.
// done runs on the writer's completer goroutine; the Submit error is
// returned at once. Event-loop safe.
func (v *Verifier) CreateUser(u User, caller string, done func(error)) error {
	u.Type, u.Status = normType(u.Type), normType(u.Status)
	if u.Type == UserSuper && v.t.snapshot().notSuper(caller) {
		return ErrSuperOnly{"create"}
	}
	if u.Type == "" {
		u.Type = UserNormal
	}
	if u.Status == "" {
		u.Status = UserEnable
	}
	return v.t.mutate(func(s *state) error {
		if strings.TrimSpace(u.Password) == "" {
			return denied("password can not be blank")
		}
		if _, ok := s.users[u.Username]; ok {
			return denied("The user is existed")
		}
		s.putUser(u)
		return nil
	}, done)
}

// UpdateUser changes the password, type or status of an existing user
// (AUTH_UPDATE_USER 3002); blank fields keep their value. Errors as
// CreateUser, plus "The user is not exist".
func (v *Verifier) UpdateUser(u User, caller string, done func(error)) error {
	u.Type, u.Status = normType(u.Type), normType(u.Status)
	snap := v.t.snapshot()
	if u.Type == UserSuper && snap.notSuper(caller) {
		return ErrSuperOnly{"update"}
	}
	return v.t.mutate(func(s *state) error {
		old, ok := s.users[u.Username]
		if !ok {
			return denied("The user is not exist")
		}
		if old.Type == UserSuper && s.notSuper(caller) {
			return denied("The super user can only be update by super user")
		}
		n := old.User
		if strings.TrimSpace(u.Password) != "" {
			n.Password = u.Password
		}
		if u.Type != "" {
			n.Type = u.Type
		}
		if u.Status != "" {
			n.Status = u.Status
		}
		s.putUser(n)
		return nil
	}, done)
}

// DeleteUser removes a user and its ACL (AUTH_DELETE_USER 3003); a missing
// user is success.
func (v *Verifier) DeleteUser(name, caller string, done func(error)) error {
	return v.t.mutate(func(s *state) error {
		if strings.TrimSpace(name) == "" {
			return denied("username can not be blank")
		}
		old, ok := s.users[name]
		if !ok {
			return nil
		}
		if old.Type == UserSuper && s.notSuper(caller) {
			return denied("The super user can only be update by super user")
		}
		delete(s.users, name)
		delete(s.acls, name)
		return nil
	}, done)
}

// GetUser returns a user as AUTH_GET_USER (3004) answers it, password
// included as RocketMQ does. Event-loop safe.
func (v *Verifier) GetUser(name string) (User, bool) {
	u, ok := v.t.snapshot().users[name]
	if !ok {
		return User{}, false
	}
	return u.User, true
}

// ListUsers returns the users whose name contains filter (all when empty),
// sorted by name (AUTH_LIST_USER 3005). Event-loop safe.
func (v *Verifier) ListUsers(filter string) []User {
	var out []User
	for _, u := range v.t.snapshot().users {
		if filter == "" || strings.Contains(u.Username, filter) {
			out = append(out, u.User)
		}
	}
	slices.SortFunc(out, func(a, b User) int { return strings.Compare(a.Username, b.Username) })
	return out
}

// PutACL merges info's policies into the subject's ACL, creating it when
// absent (AUTH_CREATE_ACL 3006 and AUTH_UPDATE_ACL 3007 behave alike in
// AuthorizationMetadataManagerImpl). subject is the header's subject,
// used when the body names none. Validation and a missing user are
// refused with an *Error carrying RocketMQ's message.
func (v *Verifier) PutACL(info AclInfo, subject string, done func(error)) error {
	acl, err := info.toACL(subject)
	if err != nil {
		return err
	}
	name := acl.Subject[len("User:"):]
	return v.t.mutate(func(s *state) error {
		if _, ok := s.users[name]; !ok {
			return denied("The subject of " + acl.Subject + " is not exist.")
		}
		if old, ok := s.acls[name]; ok {
			old.merge(acl.Policies)
			return nil
		}
		s.acls[name] = &acl
		return nil
	}, done)
}

// DeleteACL removes one resource's entry from policy policyType (Custom
// when empty) of subject's ACL, or the whole ACL when resource is empty
// (AUTH_DELETE_ACL 3008).
func (v *Verifier) DeleteACL(subject, policyType, resource string, done func(error)) error {
	typ, name, _ := strings.Cut(subject, ":")
	if typ != "User" {
		return denied("The subject is null.")
	}
	pt := PolicyCustom
	if strings.EqualFold(policyType, PolicyDefault) {
		pt = PolicyDefault
	}
	res, hasRes := ParseResource(resource)
	return v.t.mutate(func(s *state) error {
		if _, ok := s.users[name]; !ok {
			return denied("The subject is not exist.")
		}
		acl, ok := s.acls[name]
		if !ok {
			return denied("The acl is not exist.")
		}
		if hasRes {
			acl.deleteEntry(pt, res)
		}
		if !hasRes || len(acl.Policies) == 0 {
			delete(s.acls, name)
		}
		return nil
	}, done)
}

// GetACL returns subject's ACL in wire form (AUTH_GET_ACL 3009); has is
// false when the user has none. An unknown user is an *Error.
func (v *Verifier) GetACL(subject string) (info AclInfo, has bool, err error) {
	_, name, _ := strings.Cut(subject, ":")
	s := v.t.snapshot()
	if _, ok := s.users[name]; !ok {
		return AclInfo{}, false, denied("The subject is not exist.")
	}
	a, ok := s.acls[name]
	if !ok {
		return AclInfo{}, false, nil
	}
	return a.info(), true, nil
}

// ListACLs returns the ACLs whose subject key contains subjectFilter, with
// only the entries whose resource key contains resourceFilter (an ACL left
// without entries is omitted), sorted by subject (AUTH_LIST_ACL 3010).
func (v *Verifier) ListACLs(subjectFilter, resourceFilter string) []AclInfo {
	var out []AclInfo
	for _, a := range v.t.snapshot().acls {
		if subjectFilter != "" && !strings.Contains(a.Subject, subjectFilter) {
			continue
		}
		info := a.info()
		if resourceFilter != "" {
			var ps []PolicyInfo
			for _, p := range info.Policies {
				var es []EntryInfo
				for _, e := range p.Entries {
					if strings.Contains(e.Resource, resourceFilter) {
						es = append(es, e)
					}
				}
				if len(es) > 0 {
					p.Entries = es
					ps = append(ps, p)
				}
			}
			if len(ps) == 0 {
				continue
			}
			info.Policies = ps
		}
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b AclInfo) int { return strings.Compare(a.Subject, b.Subject) })
	return out
}
