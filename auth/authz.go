package auth

import "net"

// authorize checks one need of user's request from ip against the
// published state, as UserAuthorizationHandler then AclAuthorizationHandler
// do: super users pass; otherwise the best-matching entry of the Custom
// policy (else of the Default policy) decides. The refusals are *Error
// with RocketMQ's remarks.
func (s *state) authorize(user string, n need, ip *peerIP) error {
	u, ok := s.users[user]
	if !ok {
		return denied("User:" + user + " not found.")
	}
	if u.Type == UserSuper {
		return nil
	}
	acl := s.acls[user]
	if acl == nil {
		return refusal(user, n, ip, "no matched policies.")
	}
	best := acl.bestEntry(PolicyCustom, n, ip)
	if best == nil {
		best = acl.bestEntry(PolicyDefault, n, ip)
	}
	if best == nil {
		return refusal(user, n, ip, "no matched policies.")
	}
	if best.Decision == Deny {
		return refusal(user, n, ip, "the decision is deny.")
	}
	return nil
}

func refusal(user string, n need, ip *peerIP, detail string) error {
	return denied("User:" + user + " has no permission to access " + n.res.Key() + " from " + ip.get() + ", " + detail)
}

// bestEntry returns the entry of policy typ that matches n from ip and
// sorts first under comparePolicyEntries, or nil.
func (a *ACL) bestEntry(typ string, n need, ip *peerIP) *Entry {
	p := a.policy(typ)
	if p == nil {
		return nil
	}
	var best *Entry
	for i := range p.Entries {
		e := &p.Entries[i]
		if !e.Resource.matches(n.res) || !e.matchActions(n.acts) || !e.matchIP(ip) {
			continue
		}
		if best == nil || compareEntries(e, best) < 0 {
			best = e
		}
	}
	return best
}

// peerIP is the request's source IP, formatted only when a policy entry
// or a refusal needs it (most entries name no source IPs).
type peerIP struct {
	addr net.Addr
	ip   string
	done bool
}

func (p *peerIP) get() string {
	if !p.done {
		p.ip, p.done = sourceIP(p.addr), true
	}
	return p.ip
}

// matchActions is PolicyEntry.isMatchAction: any asked action granted, or
// All granted, or Any asked.
func (e *Entry) matchActions(asked Action) bool {
	if e.Actions == 0 {
		return false
	}
	if asked&ActAny != 0 {
		return true
	}
	return asked&e.Actions != 0 || e.Actions&ActAll != 0
}

// matchIP is PolicyEntry.isMatchEnvironment.
func (e *Entry) matchIP(peer *peerIP) bool {
	if len(e.SourceIPs) == 0 {
		return true
	}
	ip := peer.get()
	if ip == "" {
		return false
	}
	for _, r := range e.SourceIPs {
		if ipInRange(ip, r) {
			return true
		}
	}
	return false
}

// patRank orders patterns: literal before prefixed before any.
func patRank(p string) int {
	switch p {
	case PatLiteral:
		return 0
	case PatPrefix:
		return 1
	}
	return 2
}

// compareEntries is AclAuthorizationHandler.comparePolicyEntries: a typed
// resource before Any, a literal before a prefix before any name, a longer
// prefix first; on a tie, an entry whose decision is Deny sorts after.
func compareEntries(a, b *Entry) int {
	ra, rb := a.Resource, b.Resource
	c := 0
	switch {
	case ra.Type != rb.Type:
		if ra.Type == ResAny {
			c = 1
		}
		if rb.Type == ResAny {
			c = -1
		}
	case ra.Pattern == rb.Pattern:
		if ra.Pattern == PatPrefix {
			c = len(rb.Name) - len(ra.Name)
		}
	default:
		c = patRank(ra.Pattern) - patRank(rb.Pattern)
	}
	if c != 0 {
		return c
	}
	if a.Decision == Deny {
		return 1
	}
	if b.Decision == Deny {
		return -1
	}
	return 0
}
