package rank_test

import (
	"strings"
	"testing"

	"github.com/dmg-hpc/dmg/rank"
)

// Every shared variant applies to a Config and sets what its flags say;
// the comparisons' defaults name only shared variants.
func TestVariants(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range rank.Variants() {
		if seen[v.Name] {
			t.Errorf("variant %s twice", v.Name)
		}
		seen[v.Name] = true
		var c rank.Config
		if err := v.Apply(&c); err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, f := range c.Ablations() {
			got[strings.TrimPrefix(f, "--")] = true
		}
		for _, a := range v.Ablations {
			delete(got, a)
		}
		if len(got) != 0 || len(c.Ablations()) != len(v.Ablations) {
			t.Errorf("variant %s: Config's ablations %v, want %v", v.Name, c.Ablations(), v.Ablations)
		}
		if v.Mode != c.Mode {
			t.Errorf("variant %s: mode %q, want %q", v.Name, c.Mode, v.Mode)
		}
		c.EnsureDefaults()
		if err := c.Validate(); err != nil {
			t.Errorf("variant %s: %v", v.Name, err)
		}
	}
	if _, err := rank.VariantsNamed("naive", "nonesuch"); err == nil || !strings.Contains(err.Error(), `"nonesuch"`) {
		t.Errorf("VariantsNamed of an unknown name: %v", err)
	}
	if got, want := rank.VariantList(";", "dmg-direct", "naive", "nonesuch"), "dmg-direct=--no-collab --no-value-pull;naive=--mode naive"; got != want {
		t.Errorf("VariantList = %q, want %q", got, want)
	}
	if err := (rank.Variant{Name: "x", Ablations: []string{"no-such"}}).Apply(&rank.Config{}); err == nil {
		t.Error("a variant with an unknown ablation applied")
	}
}
