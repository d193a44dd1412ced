package faults

import (
	"context"
	"errors"
	"fmt"
	"testing"

	weft "github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/internal/check"
)

// TestCommitOutcome: a commit error is Fail only when the server certainly
// rejected the transaction; anything that leaves the outcome open (a
// transport failure, a timeout, a server bug, the server going away) is
// Info. Calling an ambiguous commit Fail would let the checkers call a
// legitimate read of its writes an anomaly (G1a), and hide lost writes.
func TestCommitOutcome(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want check.Type
	}{
		{&weft.Error{Code: weft.CodeAborted, Retryable: true}, check.Fail},
		{fmt.Errorf("wrapped: %w", &weft.Error{Code: weft.CodeAborted}), check.Fail},
		{&weft.Error{Code: weft.CodeSnapshotTooOld}, check.Fail},
		{&weft.Error{Code: weft.CodeOverloaded}, check.Fail},
		{&weft.Error{Code: weft.CodeNotFound}, check.Fail},
		{&weft.Error{Code: weft.CodeAlreadyExists}, check.Fail},
		{&weft.Error{Code: weft.CodeInvalidArgument}, check.Fail},
		{&weft.Error{Code: weft.CodeUnavailable, Message: "weft: connection reset"}, check.Info},
		{&weft.Error{Code: weft.CodeInternal}, check.Info},
		{&weft.Error{Code: weft.CodeTooLarge}, check.Info},
		{&weft.Error{Code: weft.CodeDeadlineExceeded}, check.Info},
		{&weft.Error{Code: weft.CodeCancelled}, check.Info},
		{context.DeadlineExceeded, check.Info},
		{context.Canceled, check.Info},
		{errors.New("anything else"), check.Info},
	} {
		if got := CommitOutcome(tc.err); got != tc.want {
			t.Errorf("CommitOutcome(%v) = %s, want %s", tc.err, got, tc.want)
		}
	}
}

func TestReadInts(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want []int64
	}{
		{nil, []int64{}},
		{[]any{int64(1), int64(2)}, []int64{1, 2}},
		{[]any{int64(1), "x"}, []int64{garbage}},
		{int64(3), []int64{garbage}},
	} {
		if got := readInts(tc.in); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("readInts(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
