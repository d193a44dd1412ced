package api

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Config configures a Server. Start from DefaultConfig.
type Config struct {
	// TxnsMax bounds the open Dgraph transactions (start_ts values the
	// server remembers); a full table first drops expired transactions,
	// then the least recently used one without buffered mutations, then
	// answers "429 Too Many Requests" (default 4096).
	TxnsMax int
	// TxnIdle is how long a transaction may go unused before it is
	// forgotten; a later request naming it is aborted (default 5m).
	TxnIdle time.Duration
	// AttemptsMax bounds the attempts of a request that is a whole
	// transaction (start_ts 0 with commit_now) on conflicts; requests of
	// a longer transaction are never retried by the server (default 10).
	AttemptsMax int
	// RequestBytesMax bounds an HTTP request body (default 32 MiB).
	RequestBytesMax int64
	// Version is what CheckVersion and /health report; pydgraph reads
	// a Dgraph release number from it (default "v25.0.0-weft").
	Version string
	// ACL enables access control when ACL.Secret is set.
	ACL ACLConfig
	// Logger receives transaction expiries and refused logins (default: discard).
	Logger *slog.Logger
	// Now is the clock for token expiry and idle transactions (default time.Now).
	Now func() time.Time
}

// ACLConfig configures access control: off when Secret is empty.
type ACLConfig struct {
	// Secret signs the JWTs (HMAC-SHA256); at least 32 bytes. Empty: ACL off.
	Secret []byte
	// AccessTTL is the lifetime of an access JWT (default 6h, as in Dgraph).
	AccessTTL time.Duration
	// RefreshTTL is the lifetime of a refresh JWT (default 30 days).
	RefreshTTL time.Duration
	// GrootPassword is the password the "groot" user (group "guardians")
	// gets when the store has no such user yet (default "password", as in
	// Dgraph). Stored hashed; changing it here later changes nothing.
	GrootPassword string
}

// Enabled reports whether access control is on.
func (c ACLConfig) Enabled() bool { return len(c.Secret) > 0 }

// DefaultConfig returns the documented defaults (ACL off).
func DefaultConfig() Config {
	return Config{TxnsMax: 4096, TxnIdle: 5 * time.Minute, AttemptsMax: 10, RequestBytesMax: 32 << 20,
		Version: "v25.0.0-weft",
		ACL:     ACLConfig{AccessTTL: 6 * time.Hour, RefreshTTL: 30 * 24 * time.Hour, GrootPassword: "password"}}
}

// Validate reports the first bad field.
func (c *Config) Validate() error {
	switch {
	case c.TxnsMax < 1:
		return errors.New("dgraphapi: TxnsMax must be positive")
	case c.TxnIdle <= 0:
		return errors.New("dgraphapi: TxnIdle must be positive")
	case c.AttemptsMax < 1:
		return errors.New("dgraphapi: AttemptsMax must be positive")
	case c.RequestBytesMax < 1:
		return errors.New("dgraphapi: RequestBytesMax must be positive")
	case c.ACL.Enabled() && len(c.ACL.Secret) < 32:
		return fmt.Errorf("dgraphapi: the ACL secret has %d bytes, at least 32 are needed", len(c.ACL.Secret))
	case c.ACL.Enabled() && (c.ACL.AccessTTL <= 0 || c.ACL.RefreshTTL <= 0):
		return errors.New("dgraphapi: ACL token lifetimes must be positive")
	case c.ACL.Enabled() && len([]rune(c.ACL.GrootPassword)) < 6:
		return errors.New("dgraphapi: the groot password needs at least 6 characters")
	}
	return nil
}
