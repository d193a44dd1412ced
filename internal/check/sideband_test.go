package check

import (
	"errors"
	"testing"
)

func errorsIsMalformed(err error) bool { return errors.Is(err, ErrMalformed) }

// after sets op.After.
func after(op Op, i int) Op {
	op.After = Ref(i)
	return op
}

func TestSideband(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    History
		want []string
	}{
		{"valid/list", hist(
			inv(0, ap(1, 1)), ok(0, ap(1, 1)), after(inv(1, r(1)), 1), ok(1, rl(1, 1)),
		), nil},
		{"valid/register-newer", hist(
			inv(0, w(1, 1)), ok(0, w(1, 1)), inv(2, w(1, 2)), ok(2, w(1, 2)),
			after(inv(1, r(1)), 0), ok(1, rr(1, 2)),
		), nil},
		{"valid/register-concurrent", hist(
			inv(2, w(1, 2)), inv(0, w(1, 1)), ok(0, w(1, 1)), ok(2, w(1, 2)),
			after(inv(1, r(1)), 2), ok(1, rr(1, 2)),
		), nil},
		{"stale/list", hist(
			inv(0, ap(1, 1)), ok(0, ap(1, 1)), after(inv(1, r(1)), 1), ok(1, rl(1)),
		), []string{"stale-read"}},
		{"stale/register-nil", hist(
			inv(0, w(1, 1)), ok(0, w(1, 1)), after(inv(1, r(1)), 1), ok(1, ReadNil(1)),
		), []string{"stale-read"}},
		{"stale/register-older", hist(
			inv(2, w(1, 2)), ok(2, w(1, 2)), inv(0, w(1, 1)), ok(0, w(1, 1)),
			after(inv(1, r(1)), 3), ok(1, rr(1, 2)),
		), []string{"stale-read"}},
		{"unchecked/reader-info", hist(
			inv(0, ap(1, 1)), ok(0, ap(1, 1)), after(inv(1, r(1)), 1), info(1, r(1)),
		), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := CheckSideband(tc.h)
			wantTypes(t, res, err, tc.want...)
		})
	}
}

func TestSidebandMalformed(t *testing.T) {
	for name, h := range map[string]History{
		"before-writer-completed": hist(inv(0, ap(1, 1)), after(inv(1, r(1)), 0), ok(0, ap(1, 1)), ok(1, rl(1, 1))),
		"writer-failed":           hist(inv(0, ap(1, 1)), fail(0, ap(1, 1)), after(inv(1, r(1)), 1), ok(1, rl(1))),
		"no-such-op":              hist(inv(0, ap(1, 1)), ok(0, ap(1, 1)), after(inv(1, r(1)), 17), ok(1, rl(1, 1))),
		"no-shared-key":           hist(inv(0, ap(1, 1)), ok(0, ap(1, 1)), after(inv(1, r(2)), 1), ok(1, rl(2))),
	} {
		if _, err := CheckSideband(h); !errorsIsMalformed(err) {
			t.Errorf("%s: error %v, want ErrMalformed", name, err)
		}
	}
}
