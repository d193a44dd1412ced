package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5"
)

var shared struct {
	once sync.Once
	srv  *Server
	err  error
}

// Main runs the package's tests and then stops the shared server (if a test
// started it) and removes its directory. Call it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
func Main(m *testing.M) int {
	code := m.Run()
	if shared.srv != nil {
		if err := shared.srv.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// Shared returns the package's server, starting it on first use. It skips
// the test when PostgreSQL is unavailable (ErrUnavailable) and fails it when
// the server cannot be started.
func Shared(t testing.TB) *Server {
	t.Helper()
	shared.once.Do(func() { shared.srv, shared.err = New() })
	if errors.Is(shared.err, ErrUnavailable) {
		t.Skipf("no PostgreSQL: %v", shared.err)
	}
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.srv
}

var schemas atomic.Int64

// Schema returns a schema name no other test of this run uses, made from
// t's name: a plain identifier of at most 63 bytes. On an external server
// (EnvURL) the schema is dropped when the test ends; a private server is
// thrown away whole.
func Schema(t testing.TB) string {
	name := schemaName(t)
	if srv := shared.srv; srv != nil && srv.External() {
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			conn, err := pgx.Connect(ctx, srv.URL())
			if err != nil {
				t.Errorf("pgtest: dropping schema %s: %v", name, err)
				return
			}
			defer conn.Close(ctx)
			if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+name+" CASCADE"); err != nil {
				t.Errorf("pgtest: dropping schema %s: %v", name, err)
			}
		})
	}
	return name
}

func schemaName(t testing.TB) string {
	var b strings.Builder
	for _, r := range strings.ToLower(t.Name()) {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	name := fmt.Sprintf("t%d_%s", schemas.Add(1), b.String())
	return name[:min(len(name), 63)]
}
