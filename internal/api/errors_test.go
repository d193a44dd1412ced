package api

import (
	"errors"
	"fmt"
	"testing"

	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

// Each code's wire name is its Code (HTTP and gRPC agree), except the
// HTTP-only METHOD_NOT_ALLOWED.
func TestCodeTableNames(t *testing.T) {
	for code, info := range codeTable {
		if code == CodeMethodNotAllowed {
			continue
		}
		if info.pb.String() != string(code) {
			t.Errorf("code %s maps to wire code %s", code, info.pb)
		}
	}
}

func TestCodeOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want Code
	}{
		{nil, CodeOK},
		{fmt.Errorf("commit: %w", engine.ErrAborted), CodeAborted},
		{fmt.Errorf("%w: %w", engine.ErrAborted, engine.ErrSnapshotTooOld), CodeSnapshotTooOld},
		{fmt.Errorf("op 3: %w", value.ErrMalformed), CodeInvalidArgument},
		{fmt.Errorf("x: %w", &Error{Code: CodeTooLarge, Message: "big"}), CodeTooLarge},
		{fmt.Errorf("%w: 20000 operations", txn.ErrTooLarge), CodeTooLarge},
		{errors.New("boom"), CodeInternal},
	} {
		if got := CodeOf(c.err); got != c.want {
			t.Errorf("CodeOf(%v) = %s, want %s", c.err, got, c.want)
		}
	}
	if CodeOK.HTTPStatus() != 200 || Code("NOPE").HTTPStatus() != 500 {
		t.Fatal("HTTPStatus of OK or an unknown code")
	}
}
