// Package guard is the remoting listeners' authentication and
// authorization gate: it builds the auth.Verifier from the --auth-* and
// --acl-file flags (NewVerifier) and turns it into a
// remoting.ServerOptions.Guard (New), which refuses a request before its
// handler runs.
//
// It owns only that translation (a refused request → NO_PERMISSION (16)
// or, for an ACL 1.0 account, SYSTEM_ERROR (1) with the AclException text,
// both as auth.Answer words them). It must not hold users or policies
// (package auth does), wait on storage on the event loop, or know what a
// request code does beyond what auth asks of it.
package guard

import (
	"github.com/rs/zerolog"

	"github.com/popshim/popshim/auth"
	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/remoting"
)

// NewVerifier builds the request verifier from --auth-enabled,
// --auth-authorization, --auth-whitelist, --authz-whitelist,
// --auth-admin-user/-password and --acl-file. Startup only: it reads the
// stored users and may write the initial one. Errors: a whitelist that
// does not parse, an unreadable store.
func NewVerifier(cfg *conf.Config, store *popstore.Store, w *batch.Writer, log zerolog.Logger) (*auth.Verifier, error) {
	authnW, err := auth.ParseCodes(cfg.AuthWhitelist)
	if err != nil {
		return nil, err
	}
	authzW, err := auth.ParseCodes(cfg.AuthzWhitelist)
	if err != nil {
		return nil, err
	}
	return auth.New(auth.Settings{
		Authentication:          cfg.AuthEnabled,
		Authorization:           cfg.AuthEnabled && cfg.AuthAuthorization,
		AuthenticationWhitelist: authnW,
		AuthorizationWhitelist:  authzW,
		ClusterName:             cfg.ClusterName,
		AdminUser:               cfg.AuthAdminUser,
		AdminPassword:           cfg.AuthAdminPassword,
		PlainACLFile:            cfg.ACLFile,
	}, store, w, log.With().Str("component", "auth").Logger())
}

// New returns the remoting.ServerOptions.Guard of a listener: nil when v
// checks nothing (no per-request cost), else a function that answers a
// refused request with auth.Answer's code and remark before its handler
// runs, and logs the refusal at debug level. Event loop; memory only.
func New(v *auth.Verifier, log zerolog.Logger) func(remoting.Conn, *codec.Command) *codec.Command {
	if !v.Enabled() {
		return nil
	}
	return func(c remoting.Conn, req *codec.Command) *codec.Command {
		err := v.Check(c.RemoteAddr(), req)
		if err == nil {
			return nil
		}
		code, remark := auth.Answer(err)
		log.Debug().Int32("code", req.Code).Str("remote", c.RemoteAddr().String()).Str("reason", remark).
			Msg("request refused by authentication or authorization")
		return codec.NewResponse(req, code, remark)
	}
}
