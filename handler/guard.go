package handler

import (
	"github.com/rs/zerolog"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/handler/auth"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/remoting"
)

// newVerifier builds the request verifier from --auth-* and --acl-file.
// Startup only: it reads the stored users and may write the initial one.
func newVerifier(cfg *conf.Config, store *popstore.Store, w *batch.Writer, log zerolog.Logger) (*auth.Verifier, error) {
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

// Guard is the remoting.ServerOptions.Guard of both listeners: nil when
// no check is configured (no per-request cost), else a function that
// answers a refused request with NO_PERMISSION (16) and RocketMQ's reason
// (SYSTEM_ERROR (1) and the AclException text for an ACL 1.0 account)
// before its handler runs. Event loop; memory only.
func (b *Broker) Guard() func(remoting.Conn, *codec.Command) *codec.Command {
	if !b.Auth.Enabled() {
		return nil
	}
	v := b.Auth
	return func(c remoting.Conn, req *codec.Command) *codec.Command {
		err := v.Check(c.RemoteAddr(), req)
		if err == nil {
			return nil
		}
		code, remark := auth.Answer(err)
		b.Log.Debug().Int32("code", req.Code).Str("remote", c.RemoteAddr().String()).Str("reason", remark).
			Msg("request refused by authentication or authorization")
		return codec.NewResponse(req, code, remark)
	}
}
