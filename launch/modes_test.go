package launch_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmg-hpc/dmg/launch"
	"github.com/dmg-hpc/dmg/rank"
	"github.com/dmg-hpc/dmg/spmd/mpitest"
)

// Every mode and ablation under mpirun over shm agrees with the serial
// verifier on a generated graph.
func TestModesVerifiedUnderMpirun(t *testing.T) {
	parallelMpirun(t)
	for _, a := range []string{"pagerank", "sssp"} {
		for _, v := range variantFlags {
			t.Run(a+strings.Join(v, ""), func(t *testing.T) {
				args := []string{"--roles", "cn:2,mn:2", "run", "--algo", a, "--graph", "kron:11", "--verify"}
				if a == "pagerank" {
					// 5 iterations check every path as 20 would; the naive
					// modes' atomic per edge took 27–34 s for 20 in CI.
					args = append(args, "--iterations", "5")
				}
				args = append(args, v...)
				res := mpitest.Exec(t, 4, nil, dmgBin(t), args...)
				if res.ExitCode != 0 || !strings.Contains(res.Stdout, "verified") {
					t.Fatalf("exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
				}
			})
		}
	}
}

// `dmg bench modes` compares the design with its baselines in one job: the
// operation counts (not times) must show what the design is for.
func TestBenchModes(t *testing.T) {
	js := filepath.Join(t.TempDir(), "modes.json")
	res := mpitest.Exec(t, 4, nil, dmgBin(t), "--roles", "cn:2,mn:2", "bench", "modes", "--graph", "kron:13", "--iterations", "2", "--json", js)
	if res.ExitCode != 0 {
		t.Fatalf("exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	for _, want := range []string{"naive", "famgraph", "dmg-direct", "dmg", "ops ×fewer"} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, res.Stdout)
		}
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		Name   string `json:"name"`
		Report struct {
			Ops     float64 `json:"remote_ops_per_edge"`
			Atomics float64 `json:"remote_atomics_per_edge"`
			Cache   uint64  `json:"cn_cache_bytes_max"`
			MNNice  int     `json:"mn_nice"`
		} `json:"report"`
	}
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	by := map[string]int{}
	for i, r := range rows {
		by[r.Name] = i
	}
	naive, fam, dmg := rows[by["naive"]].Report, rows[by["famgraph"]].Report, rows[by["dmg"]].Report
	if dmg.Ops*5 > naive.Ops {
		t.Errorf("dmg %.4f remote ops/edge, naive %.4f: want at least 5× fewer", dmg.Ops, naive.Ops)
	}
	if dmg.Atomics*20 > naive.Atomics {
		t.Errorf("dmg %.5f atomics/edge, naive %.5f: want at least 20× fewer", dmg.Atomics, naive.Atomics)
	}
	if dmg.MNNice != 10 {
		t.Errorf("report says the MNs ran at nice %d; --mn-nice defaults to 10", dmg.MNNice)
	}
	if dmg.Cache*2 > fam.Cache {
		t.Errorf("dmg CN cache %d, famgraph %d: want at least 2× smaller", dmg.Cache, fam.Cache)
	}
}

// A kernel that does not run in some variants (CDLP: no inbox word holds
// a multiset, so the design's direct-update ablations refuse it) is
// compared in the others, and the table says which it left out.
func TestBenchModesSkipsRefusedVariants(t *testing.T) {
	out, errOut, code := runLocal(t, "--local", "--roles", "cn:2,mn:2", "bench", "modes", "--algo", "cdlp", "--graph", "kron:9", "--iterations", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "not run: dmg-direct, dmg-refrd") || !strings.Contains(out, "dmg-valrd") || !strings.Contains(out, "famgraph") {
		t.Errorf("table:\n%s", out)
	}
	_, errOut, code = runLocal(t, "--local", "bench", "modes", "--algo", "cdlp", "--graph", "kron:9", "--variants", "n=--no-collab")
	if code != 2 || !strings.Contains(errOut, "none of the variants (n)") {
		t.Errorf("only refused variants: exit %d, %q; want exit 2 naming them", code, errOut)
	}
}

// bench modes' default variants are the shared ones of those names.
func TestModeVariantsShared(t *testing.T) {
	if _, err := rank.VariantsNamed(launch.ModeVariantNames...); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(launch.DefaultModeVariants, ";") + 1; n != len(launch.ModeVariantNames) {
		t.Errorf("DefaultModeVariants %q has %d variants; want %d", launch.DefaultModeVariants, n, len(launch.ModeVariantNames))
	}
}
