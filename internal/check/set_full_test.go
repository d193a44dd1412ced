package check

import (
	"strings"
	"testing"
)

func add(p int, t Type, e int64) Op { return Op{Process: p, Type: t, F: FAdd, Value: e} }

func readSet(p int, t Type, es ...int64) Op {
	op := Op{Process: p, Type: t, F: FRead}
	if t == OK {
		op.Value = append([]int64{}, es...)
	}
	return op
}

func TestSetFull(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    History
		want []string
		text string // expected in the report
	}{
		{"valid", hist(
			add(0, Invoke, 1), readSet(1, Invoke), add(0, OK, 1), readSet(1, OK), // concurrent: may miss
			add(0, Invoke, 2), add(0, Info, 2), // never seen: fine
			add(2, Invoke, 3), add(2, Fail, 3),
			readSet(1, Invoke), readSet(1, OK, 1),
			add(3, Invoke, 4), readSet(1, Invoke), readSet(1, OK, 1, 4), add(3, OK, 4),
			readSet(1, Invoke), readSet(1, OK, 1, 4),
		), nil, ""},
		{"lost", hist(
			add(0, Invoke, 1), add(0, OK, 1), readSet(1, Invoke), readSet(1, OK, 1),
			readSet(1, Invoke), readSet(1, OK), readSet(1, Invoke), readSet(1, OK),
		), []string{"lost"}, "never appears again"},
		{"stale/late-visibility", hist(
			add(0, Invoke, 1), add(0, OK, 1), readSet(1, Invoke), readSet(1, OK),
			readSet(1, Invoke), readSet(1, OK, 1),
		), []string{"stale"}, "acknowledged"},
		{"stale/flicker", hist(
			add(0, Invoke, 1), readSet(1, Invoke), readSet(1, OK, 1), readSet(2, Invoke), readSet(2, OK),
			readSet(1, Invoke), readSet(1, OK, 1), add(0, Info, 1),
		), []string{"stale"}, "showed it"},
		{"lost/info-add-seen-then-gone", hist(
			add(0, Invoke, 1), add(0, Info, 1), readSet(1, Invoke), readSet(1, OK, 1),
			readSet(1, Invoke), readSet(1, OK),
		), []string{"lost"}, ""},
		{"never-added", hist(
			readSet(1, Invoke), readSet(1, OK, 7),
		), []string{"never-added"}, "no operation added it"},
		{"never-added/failed-add", hist(
			add(0, Invoke, 1), add(0, Fail, 1), readSet(1, Invoke), readSet(1, OK, 1),
		), []string{"never-added"}, "failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := CheckSetFull(tc.h)
			wantTypes(t, res, err, tc.want...)
			if !strings.Contains(res.String(), tc.text) {
				t.Fatalf("report lacks %q:\n%s", tc.text, res)
			}
		})
	}
}

func TestSetFullMalformed(t *testing.T) {
	for _, h := range []History{
		hist(add(0, Invoke, 1), add(0, OK, 1), add(0, Invoke, 1), add(0, OK, 1)),
		hist(Op{Process: 0, Type: Invoke, F: FAdd, Value: "x"}),
		hist(readSet(0, Invoke), Op{Process: 0, Type: OK, F: FRead, Value: int64(3)}),
	} {
		if _, err := CheckSetFull(h); !errorsIsMalformed(err) {
			t.Errorf("error %v, want ErrMalformed", err)
		}
	}
}
