package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/popstore"
)

// metaKey names the popstore meta value holding every ACL 2.0 user and
// ACL as one JSON document (storedState). Mutations are rare and small, so
// the whole document is rewritten by each.
const metaKey = "auth"

// storedState is the durable form of the ACL 2.0 metadata.
type storedState struct {
	Users []User    `json:"users"`
	ACLs  []AclInfo `json:"acls"`
}

// entry is one user as the verifier holds it: the user and a pool of
// HMAC states keyed with its password.
type entry struct {
	User
	mac *macPool
}

// state is one immutable snapshot of users and ACLs (by username). A
// mutation builds a new one; readers load the published pointer.
type state struct {
	gen   uint64
	users map[string]*entry
	acls  map[string]*ACL
}

func newState() *state {
	return &state{users: make(map[string]*entry), acls: make(map[string]*ACL)}
}

// clone copies the maps and ACLs (entries are immutable and shared).
func (s *state) clone() *state {
	n := &state{gen: s.gen, users: make(map[string]*entry, len(s.users)), acls: make(map[string]*ACL, len(s.acls))}
	for k, v := range s.users {
		n.users[k] = v
	}
	for k, v := range s.acls {
		c := v.clone()
		n.acls[k] = &c
	}
	return n
}

func (s *state) putUser(u User) {
	s.users[u.Username] = &entry{User: u, mac: newMacPool(u.Password)}
}

func (s *state) encode() ([]byte, error) {
	st := storedState{Users: make([]User, 0, len(s.users)), ACLs: make([]AclInfo, 0, len(s.acls))}
	for _, u := range s.users {
		st.Users = append(st.Users, u.User)
	}
	for _, a := range s.acls {
		st.ACLs = append(st.ACLs, a.info())
	}
	return json.Marshal(st)
}

// table holds the published snapshot and the staged one that the next
// durable write builds on. Reads are lock-free.
type table struct {
	w         *batch.Writer
	published atomic.Pointer[state]
	mu        sync.Mutex // guards staged and gen
	staged    *state
	gen       uint64
}

// load reads the durable document; a missing one is an empty table.
func (t *table) load(store *popstore.Store) error {
	s := newState()
	v, err := store.MetaValue(metaKey)
	switch {
	case errors.Is(err, popstore.ErrNotFound):
	case err != nil:
		return fmt.Errorf("auth: read users and ACLs: %w", err)
	default:
		var st storedState
		if err := json.Unmarshal(v, &st); err != nil {
			return fmt.Errorf("auth: decode users and ACLs: %w", err)
		}
		for _, u := range st.Users {
			s.putUser(u)
		}
		for i := range st.ACLs {
			acl, err := st.ACLs[i].toACL("")
			if err != nil {
				return fmt.Errorf("auth: stored ACL of %q: %w", st.ACLs[i].Subject, err)
			}
			s.acls[acl.Subject[len("User:"):]] = &acl
		}
	}
	t.published.Store(s)
	t.staged = s
	return nil
}

// snapshot returns the published state. Any goroutine.
func (t *table) snapshot() *state { return t.published.Load() }

// mutate queues one change on the writer's background lane. change runs on
// the writer goroutine against a copy of the staged state; returning an
// error (an *Error for a refusal) writes nothing. On success the new state
// is written as one meta value and published once durable; done then runs
// on the writer's completer goroutine with nil, or with the refusal, write
// or Submit error. Returns the Submit error at once (done not called):
// batch.ErrBusy, ErrClosed, ErrFailed. Event-loop safe.
func (t *table) mutate(change func(s *state) error, done func(error)) error {
	var next *state
	op := &batch.Op{Lane: batch.LaneBackground, Bytes: 1024,
		Apply: func(tx *popstore.Txn) error {
			t.mu.Lock()
			defer t.mu.Unlock()
			n := t.staged.clone()
			if err := change(n); err != nil {
				return err
			}
			v, err := n.encode()
			if err != nil {
				return err
			}
			if err := tx.PutMetaValue(metaKey, v); err != nil {
				return err
			}
			t.gen++
			n.gen = t.gen
			t.staged, next = n, n
			return nil
		},
		Done: func(err error) {
			t.mu.Lock()
			switch {
			case err == nil:
				if cur := t.published.Load(); cur.gen < next.gen {
					t.published.Store(next)
				}
			case next != nil && t.staged == next:
				// Applied but not durable: later changes must not build on it.
				t.staged = t.published.Load()
			}
			t.mu.Unlock()
			done(err)
		},
	}
	return t.w.Submit(op)
}
