package coordclient

import (
	"testing"

	pb "github.com/weft-db/weft/internal/wire/coordpb"
)

func TestNewClientNeedsAddresses(t *testing.T) {
	if _, err := NewClient(nil); err == nil {
		t.Fatal("NewClient(nil) succeeded")
	}
}

// Only the answers another replica (or a later try) may change are retried;
// FENCED in particular is final.
func TestRetryable(t *testing.T) {
	want := map[pb.ErrorCode]bool{pb.ErrorCode_NOT_LEADER: true, pb.ErrorCode_NOT_READY: true,
		pb.ErrorCode_OVERLOADED: true, pb.ErrorCode_SHUTTING_DOWN: true}
	for v := range pb.ErrorCode_name {
		c := pb.ErrorCode(v)
		if got := retryable(c); got != want[c] {
			t.Errorf("retryable(%v) = %v, want %v", c, got, want[c])
		}
	}
}

// A client of several addresses follows only hints among them; a client of
// one address follows every hint.
func TestReaches(t *testing.T) {
	one, _ := NewClient([]string{"a:1"})
	many, _ := NewClient([]string{"a:1", "b:1"})
	if !one.reaches("z:1") || !many.reaches("b:1") || many.reaches("z:1") {
		t.Fatal("leader hints followed wrongly")
	}
}
