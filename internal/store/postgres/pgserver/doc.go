// Package pgserver runs PostgreSQL from Debian's packages for Weft: a
// throwaway server in a temporary directory for tests (New, used through
// pgtest), or a kept one on a given directory and port (Open, behind `weft
// postgres`, which `weft cluster up` starts as the store of a local
// cluster). It finds Debian's binaries (/usr/lib/postgresql/*/bin), installs
// them with `apt-get install -y postgresql` when they are missing and the
// process runs as root on a machine with apt-get, runs initdb, and starts
// `postgres` on 127.0.0.1 with its socket in the directory and fsync on.
//
// initdb and postgres refuse to run as root, so as root both run as an
// unprivileged user: "postgres" (which Debian's package creates), else a
// system user "weftpg" created for the purpose; the directory is chowned to
// it. Every process the package starts is in its own process group, which
// Stop and Crash kill whole, and receives SIGKILL if this process dies
// (Pdeathsig).
//
// WEFT_TEST_POSTGRES_URL makes New return an external server instead.
//
// A Server is safe for concurrent use.
package pgserver
