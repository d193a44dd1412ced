package weft

import (
	"testing"

	"google.golang.org/grpc/codes"
)

// A status without a Weft detail is classified as the code the server would
// have answered it with, except RESOURCE_EXHAUSTED: from gRPC itself it is a
// message over the size bound (TOO_LARGE), not OVERLOADED.
func TestTransportCodesFollowTheTable(t *testing.T) {
	for g, c := range transportCodes {
		if g == codes.ResourceExhausted {
			if c != CodeTooLarge {
				t.Errorf("RESOURCE_EXHAUSTED without a detail is %s", c)
			}
			continue
		}
		if c.GRPC() != g {
			t.Errorf("gRPC %v without a detail is %s, which the server answers as %v", g, c, c.GRPC())
		}
	}
}
