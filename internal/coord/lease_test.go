package coord

import (
	"errors"
	"testing"
	"time"
)

const ms = time.Millisecond

func TestLeaseValid(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lease Lease
		now   time.Duration
		want  bool
	}{
		{"none", Lease{}, 0, false},
		{"at start", Lease{Start: 100 * ms, Duration: 500 * ms}, 100 * ms, true},
		{"inside", Lease{Start: 100 * ms, Duration: 500 * ms}, 599 * ms, true},
		{"at expiry", Lease{Start: 100 * ms, Duration: 500 * ms}, 600 * ms, false},
		{"after", Lease{Start: 100 * ms, Duration: 500 * ms}, time.Second, false},
		{"before start", Lease{Start: 100 * ms, Duration: 500 * ms}, 99 * ms, false},
	} {
		if got := tc.lease.Valid(tc.now); got != tc.want {
			t.Errorf("%s: %v.Valid(%v) = %v, want %v", tc.name, tc.lease, tc.now, got, tc.want)
		}
	}
}

func TestLeaseRenew(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lease    Lease
		sent, d  time.Duration
		wantExp  time.Duration
		wantFrom time.Duration
	}{
		{"first grant", Lease{}, 100 * ms, 500 * ms, 600 * ms, 100 * ms},
		{"later heartbeat extends", Lease{Start: 100 * ms, Duration: 500 * ms}, 200 * ms, 500 * ms, 700 * ms, 200 * ms},
		{"late answer to an older heartbeat does not shorten", Lease{Start: 200 * ms, Duration: 500 * ms}, 100 * ms, 500 * ms, 700 * ms, 200 * ms},
		{"zero grant changes nothing", Lease{Start: 200 * ms, Duration: 500 * ms}, 300 * ms, 0, 700 * ms, 200 * ms},
		{"shorter grant, later, is kept only if it ends later", Lease{Start: 200 * ms, Duration: 500 * ms}, 300 * ms, 100 * ms, 700 * ms, 200 * ms},
	} {
		got := tc.lease.Renew(tc.sent, tc.d)
		if got.Expiry() != tc.wantExp || got.Start != tc.wantFrom {
			t.Errorf("%s: %v.Renew(%v, %v) = %v, want start %v expiry %v", tc.name, tc.lease, tc.sent, tc.d, got, tc.wantFrom, tc.wantExp)
		}
	}
}

func TestLeaseRuleMayReplace(t *testing.T) {
	r := LeaseRule{Lease: 500 * ms, MaxDrift: 100 * ms}
	for _, tc := range []struct {
		grant, now time.Duration
		want       bool
	}{
		{0, 0, false},
		{0, 599 * ms, false},
		{0, 600 * ms, true},
		{time.Second, 1599 * ms, false},
		{time.Second, 1600 * ms, true},
	} {
		if got := r.MayReplace(tc.grant, tc.now); got != tc.want {
			t.Errorf("MayReplace(grant %v, now %v) = %v, want %v", tc.grant, tc.now, got, tc.want)
		}
	}
	if r.ReplaceAt(time.Second) != 1600*ms {
		t.Errorf("ReplaceAt(1s) = %v", r.ReplaceAt(time.Second))
	}
}

func TestLeaseRuleValidate(t *testing.T) {
	for _, tc := range []struct {
		rule    LeaseRule
		suspect time.Duration
		ok      bool
	}{
		{DefaultLeaseRule(), time.Second, true},
		{LeaseRule{Lease: 900 * ms, MaxDrift: 100 * ms}, time.Second, false}, // the replacement would wait past the detector
		{LeaseRule{Lease: 0, MaxDrift: 100 * ms}, time.Second, false},
		{LeaseRule{Lease: 500 * ms, MaxDrift: -1}, time.Second, false},
		{LeaseRule{Lease: 500 * ms}, time.Second, true},
	} {
		if err := tc.rule.Validate(tc.suspect); (err == nil) != tc.ok {
			t.Errorf("%+v against %v: %v, want ok=%v", tc.rule, tc.suspect, err, tc.ok)
		}
	}
}

// TestLeaseArgument checks the inequality of lease.go over a grid of
// clock rates and delays: with the member's and the coordinator's clocks
// off by rates whose errors over the wait sum to at most MaxDrift, the
// member's last serving instant precedes the replacement, in real time.
func TestLeaseArgument(t *testing.T) {
	r := DefaultLeaseRule()
	for _, rho := range []float64{0, 0.01, 0.05, 0.08} {
		for _, delay := range []time.Duration{0, 1 * ms, 50 * ms} {
			// Real time of sending 0; the member's clock runs at 1-rho
			// (slow: serves longest), the coordinator's at 1+rho (fast:
			// replaces soonest); the grant is recorded delay later.
			memberEnd := float64(r.Lease) / (1 - rho)
			replace := float64(delay) + float64(r.Lease+r.MaxDrift)/(1+rho)
			errSum := rho*float64(r.Lease)/(1-rho) + rho*float64(r.Lease+r.MaxDrift)/(1+rho)
			if errSum <= float64(r.MaxDrift) && !(memberEnd < replace) {
				t.Errorf("rho %v delay %v: member serves until %v, replaced at %v", rho, delay,
					time.Duration(memberEnd), time.Duration(replace))
			}
		}
	}
}

func TestLeaseState(t *testing.T) {
	now := time.Duration(0)
	s := NewLeaseState(func() time.Duration { return now })
	if err := s.Check(); !errors.Is(err, ErrLeaseExpired) {
		t.Fatalf("no lease yet: %v", err)
	}
	s.Granted(10*ms, 500*ms)
	now = 100 * ms
	if err := s.Check(); err != nil {
		t.Fatalf("inside the lease: %v", err)
	}
	now = 510 * ms
	if s.MayServe() {
		t.Fatal("served at the expiry")
	}
	s.Granted(400*ms, 500*ms) // renewed: resumes
	if !s.MayServe() {
		t.Fatal("not resumed after a renewal")
	}
	s.Fence()
	s.Granted(500*ms, 500*ms)
	if s.MayServe() {
		t.Fatal("a fenced member serves")
	}
	if s.Refusals() != 1 || s.Renewals() != 2 {
		t.Fatalf("refusals %d renewals %d", s.Refusals(), s.Renewals())
	}
	p := NewLeaseState(func() time.Duration { return now })
	p.PlantIgnoreExpiry()
	p.Granted(0, ms)
	if !p.MayServe() {
		t.Fatal("the planted bug does not ignore the expiry")
	}
}
