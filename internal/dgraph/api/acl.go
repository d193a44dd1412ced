package api

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/engineapi"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

// Access control, after Dgraph's: users with passwords and groups, logging
// in for an access JWT (short-lived, sent with every request) and a
// refresh JWT (long-lived, traded for a new pair). Members of "guardians"
// may do everything; other users may query and mutate but not alter the
// schema or allocate IDs (Dgraph's per-predicate rules are not kept).
//
// Users live in reserved vertices "_dgacl|user|<name>" (namespace 0) and
// "_dgacl|ns|<n>|user|<name>" (namespace n; properties "password",
// PBKDF2-hashed as Dgraph's password type, and "groups", a list), out of
// the reach of DQL, which reads only UID-named vertices. A user belongs to
// one namespace; its tokens carry it (claim "namespace").

// Guardians is the group allowed admin operations.
const Guardians = "guardians"

// Groot is the user created on first start with ACL on.
const Groot = "groot"

const (
	userVertexPrefix = "_dgacl|user|"
	userPasswordKey  = "password"
	userGroupsKey    = "groups"
	userNameMax      = 128
)

// principal is who a request acts for: a user of namespace ns.
type principal struct {
	user   string
	groups []string
	ns     uint64
}

func (p principal) guardian() bool { return slices.Contains(p.groups, Guardians) }

// galaxyGuardian: a guardian of namespace 0, who may create and delete
// namespaces.
func (p principal) galaxyGuardian() bool { return p.ns == 0 && p.guardian() }

// claims are the JWT payload: Dgraph's (userid, groups, namespace, exp)
// plus kind, so a refresh token cannot be used as an access token.
type claims struct {
	UserID    string   `json:"userid"`
	Groups    []string `json:"groups,omitempty"`
	Namespace uint64   `json:"namespace"`
	Exp       int64    `json:"exp"`
	Kind      string   `json:"kind"`
}

const (
	kindAccess  = "access"
	kindRefresh = "refresh"
)

// acl checks credentials and tokens. With ACL off (enabled false) it still
// issues tokens — pydgraph's set-up logs in before anything else — signed
// with a random key, and lets every request through as a guardian.
type acl struct {
	enabled bool
	secret  []byte
	cfg     ACLConfig
	db      engineapi.API
	now     func() time.Time
}

func newACL(db engineapi.API, cfg ACLConfig, now func() time.Time) (*acl, error) {
	a := &acl{enabled: cfg.Enabled(), secret: cfg.Secret, cfg: cfg, db: db, now: now}
	if !a.enabled {
		a.secret = make([]byte, 32)
		if _, err := rand.Read(a.secret); err != nil {
			return nil, err
		}
		a.cfg.AccessTTL, a.cfg.RefreshTTL = 6*time.Hour, 30*24*time.Hour
	}
	return a, nil
}

var jwtHeader = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))

func (a *acl) sign(c claims) (string, error) {
	body, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	msg := jwtHeader + "." + base64.RawURLEncoding.EncodeToString(body)
	mac := hmac.New(sha256.New, a.secret)
	mac.Write([]byte(msg))
	return msg + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil)), nil
}

// verify checks a token's signature, kind and expiry.
func (a *acl) verify(tok, kind string) (claims, error) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 || parts[0] != jwtHeader {
		return claims{}, errorf(CodeUnauthenticated, "unable to parse jwt token: not an HS256 JWT")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return claims{}, errorf(CodeUnauthenticated, "unable to parse jwt token: %v", err)
	}
	mac := hmac.New(sha256.New, a.secret)
	mac.Write([]byte(parts[0] + "." + parts[1]))
	if !hmac.Equal(sig, mac.Sum(nil)) {
		return claims{}, errorf(CodeUnauthenticated, "unable to parse jwt token: signature is invalid")
	}
	body, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return claims{}, errorf(CodeUnauthenticated, "unable to parse jwt token: %v", err)
	}
	var c claims
	if err := json.Unmarshal(body, &c); err != nil {
		return claims{}, errorf(CodeUnauthenticated, "unable to parse jwt token: %v", err)
	}
	if c.Kind != kind {
		return claims{}, errorf(CodeUnauthenticated, "unable to parse jwt token: a %s token where a %s token is needed", c.Kind, kind)
	}
	if a.now().Unix() >= c.Exp {
		// pydgraph matches "Token is expired" to log in again with its refresh token.
		return claims{}, errorf(CodeUnauthenticated, "unable to parse jwt token: %s", msgExpired)
	}
	return c, nil
}

// authorize returns the principal of an access token ("" when none).
func (a *acl) authorize(tok string) (principal, error) {
	if !a.enabled {
		return principal{user: Groot, groups: []string{Guardians}}, nil
	}
	if tok == "" {
		return principal{}, errorf(CodeUnauthenticated, "no accessJwt available")
	}
	c, err := a.verify(tok, kindAccess)
	if err != nil {
		return principal{}, err
	}
	return principal{user: c.UserID, groups: c.Groups, ns: c.Namespace}, nil
}

// tokens are an access and a refresh JWT.
type tokens struct{ access, refresh string }

// login checks a password (or, when refresh is set, a refresh token) of a
// user of namespace ns (a refresh token's own namespace) and issues new
// tokens. The namespace must exist (live reports whether it does).
func (a *acl) login(ctx context.Context, user, password, refresh string, ns uint64, live func(context.Context, uint64) error) (tokens, error) {
	if refresh != "" {
		c, err := a.verify(refresh, kindRefresh)
		if err != nil {
			return tokens{}, err
		}
		user, ns = c.UserID, c.Namespace
	}
	if ns != 0 {
		if !a.enabled {
			return tokens{}, errorf(CodeInvalid, "namespace %d: namespaces need access control (weft serve --acl-secret-file)", ns)
		}
		if err := live(ctx, ns); err != nil {
			return tokens{}, err
		}
	}
	groups := []string{Guardians}
	if a.enabled {
		u, err := a.readUser(ctx, ns, user)
		if err != nil {
			return tokens{}, err
		}
		if u == nil || (refresh == "" && !dgraph.CheckPassword(u.password, password)) {
			// Dgraph's ErrorInvalidLogin: one answer for a wrong user and a wrong password.
			return tokens{}, errorf(CodeUnauthenticated, "invalid username or password")
		}
		groups = u.groups
	}
	now := a.now()
	acc, err := a.sign(claims{UserID: user, Groups: groups, Namespace: ns, Exp: now.Add(a.cfg.AccessTTL).Unix(), Kind: kindAccess})
	if err != nil {
		return tokens{}, err
	}
	ref, err := a.sign(claims{UserID: user, Namespace: ns, Exp: now.Add(a.cfg.RefreshTTL).Unix(), Kind: kindRefresh})
	if err != nil {
		return tokens{}, err
	}
	return tokens{access: acc, refresh: ref}, nil
}

type user struct {
	password string
	groups   []string
}

// userVertex is the vertex of user name of namespace ns.
func userVertex(ns uint64, name string) string {
	if ns == 0 {
		return userVertexPrefix + name
	}
	return fmt.Sprintf("%s%d|user|%s", nsVertexPrefix, ns, name)
}

func checkUserName(name string) error {
	if name == "" || len(name) > userNameMax || strings.ContainsAny(name, "|\x00") {
		return errorf(CodeInvalid, "user name %q: 1 to %d bytes, without '|' or NUL", name, userNameMax)
	}
	return nil
}

func (a *acl) readUser(ctx context.Context, ns uint64, name string) (*user, error) {
	if checkUserName(name) != nil {
		return nil, nil
	}
	snap, err := a.db.Begin(ctx)
	if err != nil {
		return nil, err
	}
	v, err := a.db.GetVertex(ctx, snap, engineapi.VertexRef{Name: userVertex(ns, name)}, engineapi.ReadOptions{Props: true})
	if err != nil || !v.Exists {
		return nil, err
	}
	u := &user{password: v.Props[userPasswordKey].Str()}
	if g := v.Props[userGroupsKey]; g.Kind() == value.List {
		for _, e := range g.List() {
			u.groups = append(u.groups, e.Str())
		}
	}
	return u, nil
}

// SetUser creates user name of namespace 0, or replaces its password and
// groups.
func (s *Server) SetUser(ctx context.Context, name, password string, groups []string) error {
	return s.acl.setUser(ctx, 0, name, password, groups, true)
}

// SetNamespaceUser is SetUser in namespace ns, which must exist.
func (s *Server) SetNamespaceUser(ctx context.Context, ns uint64, name, password string, groups []string) error {
	if ns != 0 {
		if err := s.live(ctx, ns); err != nil {
			return err
		}
	}
	return s.acl.setUser(ctx, ns, name, password, groups, true)
}

func (a *acl) setUser(ctx context.Context, ns uint64, name, password string, groups []string, replace bool) error {
	for attempt := 0; ; attempt++ {
		snap, err := a.db.Begin(ctx)
		if err != nil {
			return err
		}
		ops, read, err := a.userOps(ctx, snap, ns, name, password, groups, replace)
		if err != nil || len(ops) == 0 {
			return err
		}
		_, err = a.db.Commit(ctx, []txn.Read{read}, ops)
		if err == nil || !dgraph.Retryable(err) || attempt >= 20 {
			return err
		}
	}
}

// userOps returns the operations setting user name of namespace ns at
// snap (none when it exists and replace is false) and the read they
// depend on.
func (a *acl) userOps(ctx context.Context, snap engineapi.Snapshot, ns uint64, name, password string, groups []string, replace bool) ([]txn.Op, txn.Read, error) {
	if err := checkUserName(name); err != nil {
		return nil, txn.Read{}, err
	}
	hash, err := dgraph.HashPassword(password)
	if err != nil {
		return nil, txn.Read{}, classify(err)
	}
	gs := make([]value.Value, len(groups))
	for i, g := range groups {
		gs[i] = value.Str(g)
	}
	{
		h := userVertex(ns, name)
		v, err := a.db.GetVertex(ctx, snap, engineapi.VertexRef{Name: h}, engineapi.ReadOptions{Props: true})
		if err != nil {
			return nil, txn.Read{}, err
		}
		if v.Exists && !replace {
			return nil, v.Read, nil
		}
		var ops []txn.Op
		if !v.Exists {
			ops = append(ops, txn.Op{Kind: txn.CreateVertex, Vertex: h})
		}
		ops = append(ops, txn.Op{Kind: txn.SetVertexProp, Vertex: h, Key: userPasswordKey, Value: hash},
			txn.Op{Kind: txn.SetVertexProp, Vertex: h, Key: userGroupsKey, Value: value.ListOf(gs...)})
		return ops, v.Read, nil
	}
}

// txnHash is the TxnContext.hash of a transaction: it binds a start_ts to
// the user (and namespace) that began it, so that another user cannot
// continue or commit it. Opaque to clients, which echo it.
func (a *acl) txnHash(startTs, ns uint64, user string) string {
	mac := hmac.New(sha256.New, a.secret)
	fmt.Fprintf(mac, "%#x|%#x|%s", startTs, ns, user)
	return hex.EncodeToString(mac.Sum(nil))
}

func (a *acl) checkHash(startTs, ns uint64, user, hash string) error {
	if !a.enabled {
		return nil
	}
	want := a.txnHash(startTs, ns, user)
	if subtle.ConstantTimeCompare([]byte(want), []byte(hash)) != 1 {
		return errorf(CodePermission, "hash mismatch the claimed startTs|namespace")
	}
	return nil
}
