package rank

import (
	"slices"
	"strings"

	"github.com/pkg/errors"
)

// Ablation is one switch that turns a part of the engine off, defined
// once: its flag (without the dashes), what it does, whether it is a part
// of the design's mode (--mode dmg only), and its field in a Config. The
// command line registers them, the report lists the ones set
// (Config.Ablations), and Validate refuses the design's with another mode.
type Ablation struct {
	Flag    string
	Usage   string
	DMGOnly bool
	Field   func(c *Config) *bool
}

// AllAblations is every ablation, in the report's order.
func AllAblations() []Ablation {
	return []Ablation{
		{"no-merge", "ablation: no merging of neighbouring reads", true, func(c *Config) *bool { return &c.NoMerge }},
		{"no-doorbell", "ablation: every operation its own doorbell and round trip", true, func(c *Config) *bool { return &c.NoDoorbell }},
		{"no-collab", "ablation: direct remote update in dense iterations too", true, func(c *Config) *bool { return &c.NoCollab }},
		{"no-refrd", "ablation: no pass-by-reference redistribution", true, func(c *Config) *bool { return &c.NoRefRD }},
		{"no-valrd", "ablation: no pass-by-value redistribution", true, func(c *Config) *bool { return &c.NoValRD }},
		{"no-pull", "ablation: dense iterations push local candidates (a CAS per edge) instead of gathering them at the destination", true, func(c *Config) *bool { return &c.NoPull }},
		{"no-bottom-up", "ablation: dense traversal iterations (BFS) send their frontier's remote segments instead of checking remote in-neighbours against the other chunks' frontier bitmaps", true, func(c *Config) *bool { return &c.NoBottomUp }},
		{"no-value-pull", "ablation: dense iterations with most edges active send their segments for other CNs by RefRD/ValRD instead of pulling every own vertex's whole in-list against the other chunks' contributions, read from DM in bulk", true, func(c *Config) *bool { return &c.NoValuePull }},
		{"no-relax", "ablation: pulls of WCC and SSSP (value pulls and local ones) see only the values of the iteration's start (Jacobi), not those their CN lowered earlier in the iteration (Gauss–Seidel)", true, func(c *Config) *bool { return &c.NoRelax }},
		{"no-narrow", "ablation: WCC's value pull gathers the labels from their 8-byte words, not from the CN's copy of them in 4 bytes (vertex ids)", true, func(c *Config) *bool { return &c.NoNarrow }},
		{"no-entry-cache", "ablation: read a task's index entries from DM in every iteration instead of keeping the chunk's entries once read (within --cn-mem)", true, func(c *Config) *bool { return &c.NoEntryCache }},
		{"no-steal", "stage 2 off: workers keep static shares, no stealing", false, func(c *Config) *bool { return &c.NoSteal }},
		{"no-hubsplit", "stage 2 off: a hub vertex is one task", false, func(c *Config) *bool { return &c.NoHubSplit }},
	}
}

// Ablations lists the ablations set in c, as flags, in a fixed order
// (never nil).
func (c *Config) Ablations() []string {
	out := []string{}
	for _, a := range AllAblations() {
		if *a.Field(c) {
			out = append(out, "--"+a.Flag)
		}
	}
	return out
}

// designOnly returns the flags of the design's ablations set in c.
func (c *Config) designOnly() (set, all []string) {
	for _, a := range AllAblations() {
		if !a.DMGOnly {
			continue
		}
		all = append(all, "--"+a.Flag)
		if *a.Field(c) {
			set = append(set, "--"+a.Flag)
		}
	}
	return set, all
}

// Variant is a named configuration that the comparisons (`dmg bench
// modes`, `dmg bench suite`) and the tests share, defined once: a mode
// and some ablations.
type Variant struct {
	Name      string
	Mode      string   // "" for the design's
	Ablations []string // AllAblations' flags, without the dashes
}

// Variants are the shared configurations: the two baselines, the design
// with its parts switched on one at a time (the paper's breakdown: direct
// update, ValRD, RefRD, both, each without the value pull), the direct
// update without merging, the design without stage 2, and the design.
func Variants() []Variant {
	return []Variant{
		{Name: "naive", Mode: ModeNaive},
		{Name: "famgraph", Mode: ModeFAMGraph},
		{Name: "dmg-direct", Ablations: []string{"no-collab", "no-value-pull"}},
		{Name: "dmg-valrd", Ablations: []string{"no-refrd", "no-value-pull"}},
		{Name: "dmg-refrd", Ablations: []string{"no-valrd", "no-value-pull"}},
		{Name: "dmg-collab", Ablations: []string{"no-value-pull"}},
		{Name: "dmg-nomerge", Ablations: []string{"no-collab", "no-value-pull", "no-merge"}},
		{Name: "no-stage2", Ablations: []string{"no-steal", "no-hubsplit"}},
		{Name: "dmg"},
	}
}

// Flags are v as `dmg run` takes it.
func (v Variant) Flags() []string {
	var f []string
	if v.Mode != "" {
		f = append(f, "--mode", v.Mode)
	}
	for _, a := range v.Ablations {
		f = append(f, "--"+a)
	}
	return f
}

// Apply sets v's mode and ablations in c.
func (v Variant) Apply(c *Config) error {
	if v.Mode != "" {
		c.Mode = v.Mode
	}
	all := AllAblations()
	for _, name := range v.Ablations {
		i := slices.IndexFunc(all, func(a Ablation) bool { return a.Flag == name })
		if i < 0 {
			return errors.Errorf("rank: variant %s: no ablation --%s", v.Name, name)
		}
		*all[i].Field(c) = true
	}
	return nil
}

// VariantsNamed are the shared variants of those names, in that order;
// a name that is not one is an error.
func VariantsNamed(names ...string) ([]Variant, error) {
	all := Variants()
	out := make([]Variant, 0, len(names))
	for _, n := range names {
		i := slices.IndexFunc(all, func(v Variant) bool { return v.Name == n })
		if i < 0 {
			return nil, errors.Errorf("rank: no variant %q", n)
		}
		out = append(out, all[i])
	}
	return out, nil
}

// VariantList is the shared variants of those names, in that order, as
// the comparisons' flags take them: NAME=FLAGS joined by sep. Names that
// are not variants are left out (VariantsNamed says which).
func VariantList(sep string, names ...string) string {
	var parts []string
	for _, n := range names {
		if vs, err := VariantsNamed(n); err == nil {
			parts = append(parts, n+"="+strings.Join(vs[0].Flags(), " "))
		}
	}
	return strings.Join(parts, sep)
}
