package faultproxy

import (
	"errors"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
		ok   bool
	}{
		{"defaults with target", func(*Config) {}, true},
		{"localhost", func(c *Config) { c.Listen = "localhost:0" }, true},
		{"ipv6 loopback", func(c *Config) { c.Listen = "[::1]:0" }, true},
		{"all interfaces", func(c *Config) { c.Listen = ":0" }, false},
		{"public address", func(c *Config) { c.Listen = "10.0.0.1:0" }, false},
		{"no port", func(c *Config) { c.Listen = "127.0.0.1" }, false},
		{"no target", func(c *Config) { c.Target = "" }, false},
		{"zero hold", func(c *Config) { c.HoldBytesMax = 0 }, false},
		{"zero read", func(c *Config) { c.ReadBytesMax = 0 }, false},
		{"zero conns", func(c *Config) { c.ConnsMax = 0 }, false},
		{"zero dial timeout", func(c *Config) { c.DialTimeout = 0 }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			c.Target = "127.0.0.1:1"
			tc.edit(&c)
			err := c.Validate()
			if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrInvalid)) {
				t.Fatalf("Validate() = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

func TestDirectionString(t *testing.T) {
	for d, want := range map[Direction]string{0: "none", Upstream: "upstream", Downstream: "downstream", Both: "both", 4: "Direction(4)"} {
		if got := d.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", uint8(d), got, want)
		}
	}
}
