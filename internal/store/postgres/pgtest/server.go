package pgtest

import "github.com/weft-db/weft/internal/store/postgres/pgserver"

// Server is a PostgreSQL server run by the tests (package pgserver).
type Server = pgserver.Server

// EnvURL names the variable pointing the tests at an existing server.
const EnvURL = pgserver.EnvURL

// Superuser is the role initdb creates; connections need no password
// (trust authentication, loopback only).
const Superuser = pgserver.Superuser

// ErrUnavailable means there are no PostgreSQL binaries and no way to
// install them here: tests skip.
var ErrUnavailable = pgserver.ErrUnavailable

// New runs a throwaway server in a new temporary directory (pgserver.New).
func New() (*Server, error) { return pgserver.New() }
