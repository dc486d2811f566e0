package launch_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmg-hpc/dmg/csr"
	"github.com/dmg-hpc/dmg/csr/csrtest"
	"github.com/dmg-hpc/dmg/spmd/mpitest"
)

// writeSparseEdges writes kron:scale as a text edge list whose ids are
// sparse (1000·v+3), with comments, weighted when name ends in .wel.
func writeSparseEdges(t *testing.T, dir, name string, scale int, spread uint64) string {
	t.Helper()
	g, _, err := csr.Open(fmt.Sprintf("kron:%d", scale), csr.Options{Seed: 7, Weighted: strings.HasSuffix(name, ".wel")})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if strings.HasSuffix(name, ".bel") { // the graph itself, its ids 0..N-1
		if err := csr.WriteBinary(&b, g, csr.BinaryOptions{}); err != nil {
			t.Fatal(err)
		}
		return writeFile(t, dir, name, b.Bytes())
	}
	b.WriteString("# sparse ids\n")
	for v := range g.N {
		for i, d := range g.Neighbors(v) {
			fmt.Fprintf(&b, "%d %d", spread*uint64(v)+3, spread*uint64(d)+3)
			if g.Weights != nil {
				fmt.Fprintf(&b, " %g", g.Weights[g.Offsets[v]+uint64(i)])
			}
			b.WriteByte('\n')
		}
	}
	return writeFile(t, dir, name, b.Bytes())
}

// writeFile writes b to dir/name and returns its path.
func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A text edge list read staged (every CN its byte range, the edges
// meeting their owners in DM) gives exactly the results of every CN
// reading the whole file (--no-stage), over shm and tcp, for two role
// counts (two kernels each: the weighted and the traversal path on shm,
// the all-active ones on tcp, whose CNs keep no edges and spill them to
// DM), and the serial verifier accepts them. The unweighted graph's ids
// are too sparse for a bitmap (they meet as sorted lists), the weighted
// one's are not. A generated graph is staged too (each CN generates its
// blocks), its dense ids never mapped. Past --stage-mem, the edges meet
// their owners in rounds, each routed again in both sweeps of the
// windows: from a generator's blocks and from spilled text.
func TestStagedRead(t *testing.T) {
	if testing.Short() {
		t.Skip("mpirun integration test")
	}
	dir := t.TempDir()
	el := writeSparseEdges(t, dir, "g.el", 12, 1_000_000_007)
	wel := writeSparseEdges(t, dir, "g.wel", 12, 1000)
	for _, c := range []struct {
		roles, fabric string
		np            int
		algos         []string
		mem           string
		gen           string // a generator, else the edge lists
		stage         string // --stage-mem, if set: rounds
	}{
		{"cn:2,mn:1", "shm", 3, []string{"bfs", "sssp"}, "1GiB", "", ""},
		{"cn:3,mn:2", "tcp", 5, []string{"pagerank", "wcc"}, "0", "", ""},
		{"cn:3,mn:1", "shm", 4, []string{"sssp", "pagerank"}, "1GiB", "kron:13", ""},
		{"cn:3,mn:2", "tcp", 5, []string{"pagerank"}, "1MiB", "kron:13", "256KiB"},
		{"cn:2,mn:1", "shm", 3, []string{"wcc"}, "0", "", "64KiB"},
	} {
		for _, a := range c.algos {
			name := c.roles + "/" + c.fabric + "/" + a
			if c.gen != "" {
				name += "/" + c.gen
			}
			if c.stage != "" {
				name += "/rounds"
			}
			t.Run(name, func(t *testing.T) {
				graph := el
				switch {
				case c.gen != "":
					graph = c.gen
				case a == "sssp":
					graph = wel
				}
				var outs [2][]byte
				for i, flags := range [][]string{{"--verify"}, {"--no-stage"}} {
					out, js := filepath.Join(dir, fmt.Sprintf("%s-%d.out", a, i)), filepath.Join(dir, fmt.Sprintf("%s-%d.json", a, i))
					args := append([]string{"--roles", c.roles, "--json", js, "run", "--fabric", c.fabric, "--algo", a, "--graph", graph, "--out", out, "--load-mem", c.mem}, flags...)
					if c.stage != "" {
						args = append(args, "--stage-mem", c.stage)
					}
					res := mpitest.Exec(t, c.np, nil, dmgBin(t), args...)
					if res.ExitCode != 0 {
						t.Fatalf("%v: exit %d\n%s%s", flags, res.ExitCode, res.Stdout, res.Stderr)
					}
					var rep struct {
						Staged uint64 `json:"load_staged_bytes"`
						Rounds int    `json:"load_staged_rounds"`
					}
					if err := readJSON(js, &rep); err != nil {
						t.Fatal(err)
					}
					if (rep.Staged > 0) != (i == 0) || (rep.Rounds > 1) != (i == 0 && c.stage != "") {
						t.Fatalf("%v: %d bytes staged in %d rounds", flags, rep.Staged, rep.Rounds)
					}
					if i == 0 && !strings.Contains(res.Stdout, "verified: the serial verifier accepts the result") {
						t.Fatalf("no verification line:\n%s", res.Stdout)
					}
					var err error
					if outs[i], err = os.ReadFile(out); err != nil {
						t.Fatal(err)
					}
				}
				if !bytes.Equal(outs[0], outs[1]) {
					t.Fatal("the staged read gives other results than every CN reading the whole file")
				}
			})
		}
	}
}

// A gzipped SNAP graph, which cannot be cut, is parsed by CN 0 alone and
// staged to the others: the results pass the serial verifier.
func TestStagedGzip(t *testing.T) {
	if testing.Short() {
		t.Skip("mpirun integration test")
	}
	gz := filepath.Join(csrtest.DataDir(t), "snap", "p2p-Gnutella08.txt.gz")
	res := mpitest.Exec(t, 4, nil, dmgBin(t), "--roles", "cn:3,mn:1", "run", "--algo", "wcc", "--graph", gz, "--verify")
	if res.ExitCode != 0 {
		t.Fatalf("exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	if !strings.Contains(res.Stdout, "staged through") || !strings.Contains(res.Stdout, "verified: the serial verifier accepts the result") {
		t.Fatalf("not staged, or not verified:\n%s", res.Stdout)
	}
}
