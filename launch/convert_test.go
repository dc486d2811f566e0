package launch_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dmg-hpc/dmg/csr"
	"github.com/dmg-hpc/dmg/csr/csrtest"
	"github.com/dmg-hpc/dmg/spmd/mpitest"
)

// runConvert runs `dmg JOB-FLAGS convert ARGS` as a plain process (with
// env added) and returns its stdout, stderr and exit status.
func runConvert(t *testing.T, env, job []string, args ...string) (string, string, int) {
	t.Helper()
	return runPlain(t, env, append(append(slices.Clone(job), "convert"), args...)...)
}

func writeText(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// sameGraph fails unless a and b are the same graph: vertices, external
// ids, adjacency, weights, directedness.
func sameGraph(t *testing.T, what string, a, b *csr.Graph) {
	t.Helper()
	if a.N != b.N || !slices.Equal(a.IDs, b.IDs) || a.Directed != b.Directed {
		t.Fatalf("%s: N %d/%d, %d/%d ids, directed %v/%v", what, a.N, b.N, len(a.IDs), len(b.IDs), a.Directed, b.Directed)
	}
	if !slices.Equal(a.Offsets, b.Offsets) || !slices.Equal(a.Dst, b.Dst) || !reflect.DeepEqual(a.Weights, b.Weights) {
		t.Fatalf("%s: adjacency or weights differ", what)
	}
}

// toFloat32 rounds a graph's weights as the engine stores them.
func toFloat32(g *csr.Graph) *csr.Graph {
	for i, w := range g.Weights {
		g.Weights[i] = float64(float32(w))
	}
	return g
}

// dmg convert IN OUT.bel keeps the graph: read back, OUT is the graph IN
// is, with its ids, weights and parallel edges, for the ways dmg run
// reads a graph (as is, undirected, weighted, unweighted); it keeps a
// Graphalytics dataset's parameters and the degrees a default source is
// picked by.
func TestConvert(t *testing.T) {
	data := csrtest.DataDir(t)
	dir := t.TempDir()
	// SNAP style: comments, tabs, sparse and 64-bit ids, a self-loop,
	// parallel edges (vertex 100 lists the most out-edges only with them).
	snap := writeText(t, dir, "g.txt", "# Directed graph: g.txt\n# FromNodeId\tToNodeId\n100\t7\n100\t7\n100\t7\n7\t100\n7\t3000000000000\n3\t3\n5\t100\n")
	wel := writeText(t, dir, "g.wel", "1 2 0.5\n2 1 0.25\n1 2 0.125\n9 9 2\n4 1 0.1\n")
	mtx := writeText(t, dir, "m.mtx", "%%MatrixMarket matrix coordinate real symmetric\n% c\n5 5 3\n2 1 1.5\n3 3 2\n4 2 0.5\n")
	type tc struct {
		name  string
		in    string
		out   string
		flags []string
		conv  csr.Options // what the flags ask for, as csr options of IN
		f32   bool
	}
	cases := []tc{
		{name: "snap-text", in: snap},
		{name: "snap-gz", in: filepath.Join(data, "snap", "email-Eu-core.txt.gz")},
		{name: "wel", in: wel},
		{name: "mtx", in: mtx},
		{name: "kron", in: "kron:8", flags: []string{"--seed", "3"}, conv: csr.Options{Seed: 3}},
		{name: "undirected", in: snap, flags: []string{"--undirected"}, conv: csr.Options{Undirected: true}},
		{name: "weighted", in: snap, flags: []string{"--weighted", "--seed", "5"}, conv: csr.Options{Weighted: true, Seed: 5}},
		{name: "unweighted", in: wel, flags: []string{"--unweighted"}, conv: csr.Options{Unweighted: true}},
		{name: "float32", in: wel, flags: []string{"--float32"}, f32: true},
		{name: "drop-self-loops", in: snap, flags: []string{"--drop-self-loops"}, conv: csr.Options{SelfLoops: csr.DropSelfLoops}},
		{name: "drop-duplicates", in: wel, flags: []string{"--drop-duplicates"}, conv: csr.Options{Duplicates: csr.DropDuplicates}},
		{name: "format", in: writeText(t, dir, "g.dat", "1 2 5\n2 3 7\n"), flags: []string{"--format", "wel"}, conv: csr.Options{Format: csr.FormatWEL}},
		{name: "gz-out", in: wel, out: "g.bel.gz"},
	}
	for _, ds := range csrtest.GraphalyticsDatasets(t) {
		cases = append(cases, tc{name: ds, in: filepath.Join(csrtest.GraphalyticsDir(t, ds), ds+".properties")})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := c.out
			if name == "" {
				name = "out.bel"
			}
			out := filepath.Join(t.TempDir(), name)
			so, se, code := runConvert(t, nil, nil, append(slices.Clone(c.flags), c.in, out)...)
			if code != 0 || se != "" || strings.Count(so, "\n") != 1 || !strings.Contains(so, "vertices") {
				t.Fatalf("exit %d\nstdout %q\nstderr %q", code, so, se)
			}
			// The stored graph as it is, parallel edges and all.
			keep := c.conv
			if keep.Duplicates == csr.DropDuplicates && !slices.Contains(c.flags, "--drop-duplicates") {
				keep.Duplicates = csr.KeepDuplicates
			}
			want, wmeta, err := csr.Open(c.in, keep)
			if err != nil {
				t.Fatal(err)
			}
			got, gmeta, err := csr.Open(out, csr.Options{Duplicates: csr.KeepDuplicates})
			if err != nil {
				t.Fatal(err)
			}
			if c.f32 {
				toFloat32(want)
			}
			sameGraph(t, "stored", want, got)
			// As dmg run reads it.
			for _, v := range []csr.Options{{}, {Undirected: true}, {Weighted: true}, {Unweighted: true}} {
				if v.Weighted && c.conv.Unweighted {
					continue // no read gives an input with weights synthetic ones
				}
				v.Seed = c.conv.Seed // dmg run --seed: the generator's and the synthetic weights'
				o := c.conv
				o.Undirected = o.Undirected || v.Undirected
				if v.Weighted && !o.Unweighted {
					o.Weighted = true
				}
				if v.Unweighted {
					o.Weighted, o.Unweighted = false, true
				}
				want, _, err := csr.Open(c.in, o)
				if err != nil {
					t.Fatal(err)
				}
				got, _, err := csr.Open(out, v)
				if err != nil {
					t.Fatal(err)
				}
				sameGraph(t, "read "+fmtOpts(v), toFloat32(want), toFloat32(got))
			}
			// The parameters, and the degrees a default source is picked by
			// (which count parallel edges: --drop-duplicates changes them).
			if wmeta.HasBFSSource != gmeta.HasBFSSource || wmeta.BFSSource != gmeta.BFSSource || wmeta.HasSSSPSource != gmeta.HasSSSPSource ||
				wmeta.SSSPSource != gmeta.SSSPSource || wmeta.HasPR != gmeta.HasPR || wmeta.PRIterations != gmeta.PRIterations ||
				wmeta.PRDamping != gmeta.PRDamping || !slices.Equal(wmeta.Algorithms, gmeta.Algorithms) {
				t.Errorf("parameters: %+v\nwant %+v", gmeta, wmeta)
			}
			all := func(deg []uint64) (uint32, uint32, error) { return 0, uint32(len(deg)), nil }
			ws, _, err := csr.OpenShare(c.in, c.conv, all)
			if err != nil {
				t.Fatal(err)
			}
			gs, _, err := csr.OpenShare(out, csr.Options{}, all)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ws.Degrees, gs.Degrees) && !slices.Contains(c.flags, "--drop-duplicates") {
				t.Errorf("degrees differ")
			}
		})
	}
}

func fmtOpts(o csr.Options) string {
	var s []string
	if o.Undirected {
		s = append(s, "undirected")
	}
	if o.Weighted {
		s = append(s, "weighted")
	}
	if o.Unweighted {
		s = append(s, "unweighted")
	}
	if len(s) == 0 {
		return "as is"
	}
	return strings.Join(s, ", ")
}

// dmg run on the converted graph gives what it gives on the input, with
// the same external ids, the default source included.
func TestConvertRunSame(t *testing.T) {
	data := csrtest.DataDir(t)
	dir := t.TempDir()
	snap := writeText(t, dir, "g.txt", "# c\n100\t7\n100\t7\n100\t7\n7\t100\n7\t3000000000000\n3\t3\n5\t100\n")
	for _, in := range []string{snap, filepath.Join(csrtest.GraphalyticsDir(t, "example-directed"), "example-directed.properties"),
		filepath.Join(data, "snap", "p2p-Gnutella08.txt.gz")} {
		out := filepath.Join(dir, filepath.Base(in)+".bel")
		if _, se, code := runConvert(t, nil, nil, "-q", in, out); code != 0 || se != "" {
			t.Fatalf("%s: exit %d: %s", in, code, se)
		}
		for _, a := range []string{"bfs", "pagerank", "wcc", "sssp"} {
			var res [2][]byte
			for i, g := range []string{in, out} {
				o := filepath.Join(dir, a+".out")
				if _, se, code := runLocal(t, "--local", "run", "--algo", a, "--graph", g, "--out", o); code != 0 {
					t.Fatalf("%s %s: exit %d: %s", a, g, code, se)
				}
				b, err := os.ReadFile(o)
				if err != nil {
					t.Fatal(err)
				}
				res[i] = b
			}
			if string(res[0]) != string(res[1]) {
				t.Errorf("%s on %s: the results differ from the converted graph's", a, filepath.Base(in))
			}
		}
	}
}

// Bad input exits 2 with one line saying what is wrong (the file and
// line for a malformed input), and leaves an existing OUT as it was and
// no temporary beside it.
func TestConvertBadInput(t *testing.T) {
	dir := t.TempDir()
	outDir := t.TempDir()
	good := writeText(t, dir, "g.el", "1 2\n2 3\n")
	bad := writeText(t, dir, "bad.el", "1 2\n# c\n3 x\n")
	deep := writeText(t, dir, "deep.el", strings.Repeat("1 2\n", 300000)+"1 2 3\n")
	badE := writeText(t, dir, "x.e", "1 2\n2 9\n")
	writeText(t, dir, "x.v", "1\n2\n")
	writeText(t, dir, "x.properties", "graph.x.directed = true\n")
	existing := writeText(t, outDir, "keep.bel", "not a graph, but mine")
	if err := os.Mkdir(filepath.Join(outDir, "dir.bel"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		env  []string
		job  []string // job flags, before the command
		args []string
		want string
	}{
		{"missing-file", nil, nil, []string{filepath.Join(dir, "nope.el"), existing}, "nope.el: no such file or directory"},
		{"malformed-line", nil, nil, []string{bad, existing}, "bad.el:3: expected a non-negative integer destination vertex id, got \"x\""},
		{"malformed-deep", nil, nil, []string{deep, existing}, "deep.el:300001: expected 2 fields (src dst), got 3"},
		{"graphalytics", nil, nil, []string{badE, existing}, "x.e:2: destination vertex 9 is not in the vertex file x.v"},
		{"bad-generator", nil, nil, []string{"kron:99", existing}, "kron:99"},
		{"unwritable-out", nil, nil, []string{good, "/proc/dmg-convert-test.bel"}, "cannot write in /proc"},
		{"out-dir-missing", nil, nil, []string{good, filepath.Join(outDir, "no", "g.bel")}, "does not exist"},
		{"out-is-directory", nil, nil, []string{good, filepath.Join(outDir, "dir.bel")}, "dir.bel is a directory"},
		{"out-not-bel", nil, nil, []string{good, filepath.Join(outDir, "g.txt")}, "expected a name ending in .bel"},
		{"one-argument", nil, nil, []string{good}, "convert takes an input and an output"},
		{"exclusive-flags", nil, nil, []string{"--weighted", "--unweighted", good, existing}, "--weighted and --unweighted exclude each other"},
		{"unknown-format", nil, nil, []string{"--format", "csv", good, existing}, "unknown format \"csv\""},
		{"roles", nil, []string{"--roles", "cn:1,mn:1"}, []string{good, existing}, "--roles and --local do not apply"},
	} {
		t.Run(c.name, func(t *testing.T) {
			so, se, code := runConvert(t, c.env, c.job, c.args...)
			lines := strings.Split(strings.TrimSpace(se), "\n")
			if code != 2 || len(lines) != 1 || !strings.HasPrefix(se, "dmg: ") || !strings.Contains(se, c.want) || so != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and one line with %q", code, so, se, c.want)
			}
			if b, err := os.ReadFile(existing); err != nil || string(b) != "not a graph, but mine" {
				t.Errorf("the existing output changed: %q %v", b, err)
			}
			if tmps, _ := filepath.Glob(filepath.Join(outDir, ".*")); len(tmps) > 0 {
				t.Errorf("temporaries left: %v", tmps)
			}
		})
	}
}

// dmg convert under mpirun, every rank parsing a range, writes the file
// one process writes, byte for byte (a text input, gzipped or not, and
// the inputs rank 0 converts alone); a bad line fails the job once,
// naming its line in the whole file, with the output and its directory
// as they were.
func TestConvertUnderMpirun(t *testing.T) {
	data := csrtest.DataDir(t)
	dir := t.TempDir()
	var b strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&b, "%d\t%d\t%g\n", (i*i)%7919*1000+3, (i*31)%4001*1000+3, float64(i%9)/8)
	}
	wel := writeText(t, dir, "g.wel", b.String())
	var sb strings.Builder // ids too sparse for a bitmap: they meet as sorted lists
	for i := range 20000 {
		fmt.Fprintf(&sb, "%d\t%d\n", uint64((i*i)%7919)*1_000_000_007+3, uint64((i*31)%4001)*1_000_000_007+3)
	}
	sparse := writeText(t, dir, "sparse.el", sb.String())
	for _, c := range []struct {
		name  string
		np    int
		in    string
		flags []string
	}{
		{"wel", 3, wel, nil},
		{"sparse", 3, sparse, nil},
		{"undirected-float32", 2, wel, []string{"--undirected", "--float32", "--drop-self-loops"}},
		{"snap-gz", 2, filepath.Join(data, "snap", "p2p-Gnutella08.txt.gz"), []string{"--weighted"}},
		{"drop-duplicates (rank 0 alone)", 2, wel, []string{"--drop-duplicates"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			par, one := filepath.Join(out, "par.bel"), filepath.Join(out, "one.bel")
			res := mpitest.Exec(t, c.np, nil, dmgBin(t), append(append([]string{"convert"}, c.flags...), c.in, par)...)
			if res.ExitCode != 0 || res.Stderr != "" || strings.Count(res.Stdout, "\n") != 1 {
				t.Fatalf("exit %d\nstdout %q\nstderr %q", res.ExitCode, res.Stdout, res.Stderr)
			}
			if _, se, code := runConvert(t, nil, nil, append(append([]string{"-q"}, c.flags...), c.in, one)...); code != 0 {
				t.Fatalf("one process: exit %d: %s", code, se)
			}
			pb, err1 := os.ReadFile(par)
			ob, err2 := os.ReadFile(one)
			if err1 != nil || err2 != nil || string(pb) != string(ob) {
				t.Fatalf("%d ranks wrote %d bytes (%v), one process %d (%v): they differ", c.np, len(pb), err1, len(ob), err2)
			}
			if ents, _ := os.ReadDir(out); len(ents) != 2 {
				t.Fatalf("%d files left in the output directory, want 2", len(ents))
			}
		})
	}
	t.Run("bad-line", func(t *testing.T) {
		lines := strings.Split(b.String(), "\n")
		lines[15000] = "7 x"
		bad := writeText(t, dir, "bad.wel", strings.Join(lines, "\n"))
		out := t.TempDir()
		existing := writeText(t, out, "g.bel", "mine")
		res := mpitest.Exec(t, 3, nil, dmgBin(t), "convert", bad, existing)
		msg := strings.Split(strings.TrimSpace(res.Stderr), "\n")
		if res.ExitCode != 2 || len(msg) != 1 || !strings.Contains(msg[0], "bad.wel:15001: expected") || res.Stdout != "" {
			t.Fatalf("exit %d, stdout %q, stderr %q; want 2 and one line naming bad.wel:15001", res.ExitCode, res.Stdout, res.Stderr)
		}
		if got, err := os.ReadFile(existing); err != nil || string(got) != "mine" {
			t.Fatalf("the existing output changed: %q %v", got, err)
		}
		if ents, _ := os.ReadDir(out); len(ents) != 1 {
			t.Fatalf("%d files left in the output directory, want 1", len(ents))
		}
	})
}
