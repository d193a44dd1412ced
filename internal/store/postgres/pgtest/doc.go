// Package pgtest runs a throwaway PostgreSQL server for tests (the server
// itself is package pgserver): it finds
// Debian's binaries (/usr/lib/postgresql/*/bin), installs them with
// `apt-get install -y postgresql` when they are missing and the test runs as
// root on a machine with apt-get (CI does), runs initdb into a fresh
// temporary directory, and starts `postgres` on 127.0.0.1 with a free port,
// its socket in that directory and fsync on. Without binaries and without a
// way to install them, tests skip with a message saying so.
//
// initdb and postgres refuse to run as root, so as root both run as an
// unprivileged user: "postgres" (which Debian's package creates), else a
// system user "weftpg" created for the purpose; the directory is chowned to
// it.
//
// One server is shared by every test of a package run: the package's
// TestMain calls Main, tests call Shared and isolate themselves with a
// schema of their own (Schema). Main stops the server and removes its
// directory when the tests are done, pass or fail; the server also receives
// SIGKILL if the test binary dies (Pdeathsig), and every process it starts is
// in its own process group, which Stop and Crash kill whole.
//
// WEFT_TEST_POSTGRES_URL points the tests at an existing server instead
// (another PostgreSQL, CockroachDB, YugabyteDB); tests that need to crash
// the server then skip.
//
// A Server is safe for concurrent use.
package pgtest
