package faults

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	good := DefaultConfig()
	good.OutDir, good.Bin = "out", "weft"
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*Config){
		"no out":           func(c *Config) { c.OutDir = "" },
		"no duration":      func(c *Config) { c.Duration = 0 },
		"all healed":       func(c *Config) { c.HealedPhase = c.Duration },
		"no clients":       func(c *Config) { c.Clients = 0 },
		"bad workload":     func(c *Config) { c.Workloads = []string{"nope"} },
		"twice":            func(c *Config) { c.Workloads = []string{WorkloadBank, WorkloadBank} },
		"bad nemesis":      func(c *Config) { c.Nemeses = []FaultKind{"flood"} },
		"bad timing":       func(c *Config) { c.Timing.FaultMax = c.Timing.FaultMin - 1 },
		"small ring":       func(c *Config) { c.Sizes.RingSize = 3 },
		"negative rate":    func(c *Config) { c.Rate = -1 },
		"no op timeout":    func(c *Config) { c.OpTimeout = 0 },
		"one bank account": func(c *Config) { c.Sizes.BankAccounts = 1 },
	} {
		c := good
		mut(&c)
		if err := c.Validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Validate = %v, want ErrInvalid", name, err)
		}
	}
	if h := (Config{Duration: 10 * time.Minute}).healed(); h != time.Minute {
		t.Errorf("healed phase of 10m = %v, want 1m", h)
	}
	if h := (Config{Duration: 20 * time.Second}).healed(); h != 8*time.Second {
		t.Errorf("healed phase of 20s = %v, want 8s", h)
	}
}

func TestParseLists(t *testing.T) {
	if w, err := ParseWorkloads("bank, ring"); err != nil || !reflect.DeepEqual(w, []string{"bank", "ring"}) {
		t.Fatalf("ParseWorkloads = %v, %v", w, err)
	}
	if w, err := ParseWorkloads("all"); err != nil || len(w) != len(AllWorkloads) {
		t.Fatalf("ParseWorkloads(all) = %v, %v", w, err)
	}
	if _, err := ParseWorkloads("bank,nope"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("ParseWorkloads(nope) = %v", err)
	}
	if n, err := ParseNemeses("kill,partition"); err != nil || !reflect.DeepEqual(n, []FaultKind{FaultKill, FaultPartition}) {
		t.Fatalf("ParseNemeses = %v, %v", n, err)
	}
	if n, err := ParseNemeses("none"); err != nil || n != nil {
		t.Fatalf("ParseNemeses(none) = %v, %v", n, err)
	}
	if _, err := ParseNemeses("flood"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("ParseNemeses(flood) = %v", err)
	}
}
