package rank

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
