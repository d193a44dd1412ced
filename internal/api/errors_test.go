package api

import (
	"errors"
	"fmt"
	"testing"

	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
	"github.com/weft-db/weft/internal/wire/apicode"
)

func TestCodeOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want apicode.Code
	}{
		{nil, apicode.CodeOK},
		{fmt.Errorf("commit: %w", engine.ErrAborted), apicode.CodeAborted},
		{fmt.Errorf("%w: %w", engine.ErrAborted, engine.ErrSnapshotTooOld), apicode.CodeSnapshotTooOld},
		{fmt.Errorf("op 3: %w", value.ErrMalformed), apicode.CodeInvalidArgument},
		{fmt.Errorf("x: %w", &Error{Code: apicode.CodeTooLarge, Message: "big"}), apicode.CodeTooLarge},
		{fmt.Errorf("%w: 20000 operations", txn.ErrTooLarge), apicode.CodeTooLarge},
		{errors.New("boom"), apicode.CodeInternal},
	} {
		if got := CodeOf(c.err); got != c.want {
			t.Errorf("CodeOf(%v) = %s, want %s", c.err, got, c.want)
		}
	}
	if apicode.CodeOK.HTTPStatus() != 200 || apicode.Code("NOPE").HTTPStatus() != 500 {
		t.Fatal("HTTPStatus of OK or an unknown code")
	}
}
