package auth

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/rs/zerolog"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// Request codes of the ACL 2.0 admin commands (RequestCode.java
// AUTH_CREATE_USER .. AUTH_LIST_ACL), sent by mqadmin createUser,
// updateUser, deleteUser, getUser, listUser, createAcl, updateAcl,
// deleteAcl, getAcl, listAcl.
const (
	RequestCreateUser int32 = 3001
	RequestUpdateUser int32 = 3002
	RequestDeleteUser int32 = 3003
	RequestGetUser    int32 = 3004
	RequestListUser   int32 = 3005
	RequestCreateACL  int32 = 3006
	RequestUpdateACL  int32 = 3007
	RequestDeleteACL  int32 = 3008
	RequestGetACL     int32 = 3009
	RequestListACL    int32 = 3010
)

// GET_KV_CONFIG (101) and DELETE_KV_CONFIG (102), RequestCode.java.
const (
	requestGetKVConfig    int32 = 101
	requestDeleteKVConfig int32 = 102
)

// Settings configures a Verifier (conf's --auth-* and --acl-file flags;
// Java's AuthConfig).
type Settings struct {
	// Authentication checks every request's signature
	// (authenticationEnabled).
	Authentication bool
	// Authorization checks ACL 2.0 policies after authentication
	// (authorizationEnabled).
	Authorization bool
	// AuthenticationWhitelist and AuthorizationWhitelist are request codes
	// that skip the step (authenticationWhitelist, authorizationWhitelist).
	AuthenticationWhitelist []int32
	AuthorizationWhitelist  []int32
	// ClusterName names the Cluster resource of cluster-wide requests.
	ClusterName string
	// AdminUser and AdminPassword, when both set, create a super user at
	// start unless the user exists (initAuthenticationUser).
	AdminUser     string
	AdminPassword string
	// PlainACLFile is an ACL 1.0 plain_acl.yml; empty: none.
	PlainACLFile string
}

// ParseCodes reads a comma-separated list of request codes
// ("10,310 , 34"); an empty string is no codes.
func ParseCodes(s string) ([]int32, error) {
	var out []int32
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		n, err := strconv.ParseInt(p, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("request code %q: %w", p, err)
		}
		out = append(out, int32(n))
	}
	return out, nil
}

// Verifier authenticates and authorizes requests before their handler
// runs, from memory only. Check is safe on any event loop; the admin
// methods queue durable writes on the batch writer.
type Verifier struct {
	set    Settings
	authnW map[int32]bool
	authzW map[int32]bool
	t      table
	plain  *plainACL // nil without --acl-file
	log    zerolog.Logger
}

// New loads the users and ACLs from store (startup only: it reads
// RocksDB), creates the initial super user when configured and absent
// (one synced write), and loads the ACL 1.0 file when set. Secrets are
// never logged.
func New(set Settings, store *popstore.Store, w *batch.Writer, log zerolog.Logger) (*Verifier, error) {
	v := &Verifier{set: set, authnW: codeSet(set.AuthenticationWhitelist), authzW: codeSet(set.AuthorizationWhitelist), log: log}
	v.t.w = w
	if err := v.t.load(store); err != nil {
		return nil, err
	}
	if set.AdminUser != "" && set.AdminPassword != "" {
		if _, ok := v.t.snapshot().users[set.AdminUser]; !ok {
			u := User{Username: set.AdminUser, Password: set.AdminPassword, Type: UserSuper, Status: UserEnable}
			errc := make(chan error, 1)
			if err := v.t.mutate(func(s *state) error { s.putUser(u); return nil }, func(err error) { errc <- err }); err != nil {
				return nil, fmt.Errorf("auth: create initial user: %w", err)
			}
			if err := <-errc; err != nil {
				return nil, fmt.Errorf("auth: create initial user: %w", err)
			}
			log.Info().Str("user", set.AdminUser).Msg("initial super user created")
		}
	}
	if set.PlainACLFile != "" {
		p, err := loadPlainACL(set.PlainACLFile, log)
		if err != nil {
			return nil, err
		}
		v.plain = p
	}
	return v, nil
}

func codeSet(codes []int32) map[int32]bool {
	m := make(map[int32]bool, len(codes))
	for _, c := range codes {
		m[c] = true
	}
	return m
}

// Enabled reports whether Check can refuse anything.
func (v *Verifier) Enabled() bool {
	return v != nil && (v.set.Authentication || v.set.Authorization || v.plain != nil)
}

// Close stops the ACL 1.0 file watcher, if any.
func (v *Verifier) Close() {
	if v != nil && v.plain != nil {
		v.plain.close()
	}
}

// Check decides whether req from remote may reach its handler: nil, or an
// *Error whose message is the remark of the NO_PERMISSION (16) answer.
// Authentication first (AuthenticationPipeline), then authorization
// (AuthorizationPipeline); a request whose AccessKey is an ACL 1.0 account
// of --acl-file is judged by the 1.0 rules instead. Runs on the event loop:
// memory only, one HMAC-SHA1 of the request.
func (v *Verifier) Check(remote net.Addr, req *codec.Command) error {
	if v.plain != nil {
		only := !v.set.Authentication && !v.set.Authorization
		if handled, err := v.plain.check(remote, req, only); handled {
			return err
		}
	}
	if !v.set.Authentication && !v.set.Authorization {
		return nil
	}
	s := v.t.snapshot()
	ak, _ := req.Ext(FieldAccessKey)
	var u *entry
	if v.set.Authentication && !v.authnW[req.Code] {
		var err error
		if u, err = s.authenticate(ak, req); err != nil {
			return err
		}
	}
	if !v.set.Authorization || v.authzW[req.Code] {
		return nil
	}
	if u != nil && u.Type == UserSuper {
		// Every resource would pass (UserAuthorizationHandler): skip
		// deriving them. Only a HEART_BEAT body that does not parse is
		// then left to the handler instead of "parse authorization
		// context error.".
		return nil
	}
	var buf [4]need
	needs, err := needsOf(buf[:0], req, v.set.ClusterName)
	if err != nil {
		return err
	}
	if len(needs) == 0 {
		return nil
	}
	if ak == "" {
		return denied("Authorization failed. Please verify your access rights and try again.")
	}
	ip := peerIP{addr: remote}
	for _, n := range needs {
		if err := s.authorize(ak, n, &ip); err != nil {
			return err
		}
	}
	return nil
}

// authenticate is DefaultAuthenticationHandler: the user must exist and be
// enabled, and the Signature must be the one its password gives. It
// returns the authenticated user.
func (s *state) authenticate(ak string, req *codec.Command) (*entry, error) {
	if ak == "" {
		return nil, denied("username cannot be null.")
	}
	u, ok := s.users[ak]
	if !ok {
		return nil, denied("User:" + ak + " is not found.")
	}
	if u.Status == UserDisable {
		return nil, denied("User:" + ak + " is disabled.")
	}
	sig, ok := req.Ext(FieldSignature)
	if !ok || !u.mac.verify(req, sig) {
		return nil, denied("check signature failed.")
	}
	return u, nil
}

// Answer is the response code and remark for a Check refusal: SYSTEM_ERROR
// (1) for an ACL 1.0 *PlainError, as a 1.0 broker answered, else
// NO_PERMISSION (16) with the message, as AuthenticationPipeline and
// AuthorizationPipeline answer.
func Answer(err error) (code int32, remark string) {
	var pe *PlainError
	if errors.As(err, &pe) {
		return codec.SystemError, pe.Error()
	}
	return codec.NoPermission, err.Error()
}
