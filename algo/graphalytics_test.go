package algo

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmg-hpc/dmg/csr"
)

func TestFormatOutput(t *testing.T) {
	g := &csr.Graph{N: 3, IDs: []uint64{7, 1 << 40, 2}}
	tests := []struct {
		name string
		run  func(w *bytes.Buffer) error
		want string
	}{
		{"ints", func(w *bytes.Buffer) error { return FormatOutput(w, g, []int64{0, math.MaxInt64, 2}) },
			"7 0\n1099511627776 9223372036854775807\n2 2\n"},
		{"uints", func(w *bytes.Buffer) error { return FormatOutput(w, g, []uint64{7, math.MaxUint64, 2}) },
			"7 7\n1099511627776 18446744073709551615\n2 2\n"},
		{"floats", func(w *bytes.Buffer) error { return FormatOutput(w, g, []float64{0.1477629166666667, math.Inf(1), 0}) },
			"7 1.47762916666667e-01\n1099511627776 infinity\n2 0.00000000000000e+00\n"},
		{"identity ids", func(w *bytes.Buffer) error { return FormatOutput(w, &csr.Graph{N: 2}, []float64{1, 1e300}) },
			"0 1.00000000000000e+00\n1 1.00000000000000e+300\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.run(&b); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Fatalf("got %q, want %q", b.String(), tc.want)
			}
		})
	}
	for name, vals := range map[string][]float64{"NaN": {0, math.NaN(), 0}, "-Inf": {math.Inf(-1), 0, 0}, "short": {0, 0}} {
		if err := FormatOutput(&bytes.Buffer{}, g, vals); err == nil || !strings.HasPrefix(err.Error(), "algo: ") {
			t.Errorf("%s: error %v, want an algo error", name, err)
		}
	}
}

func TestWriteOutputRoundTrip(t *testing.T) {
	dir := t.TempDir()
	g := &csr.Graph{N: 4, IDs: []uint64{40, 10, 30, 20}}
	ranks := []float64{0.1, 0.2, 0.3, 0.4}
	depths := []int64{0, 1, math.MaxInt64, 2}
	labels := []uint64{10, 10, 30, 30}
	dists := []float64{0, 0.5, math.Inf(1), 1.0 / 3}
	for _, tc := range []struct {
		kind  Kind
		write func(path string) error
		out   func() (*Output, error)
	}{
		{KindPR, func(p string) error { return WriteOutput(p, g, ranks) }, func() (*Output, error) { return NewOutput(KindPR, g, ranks) }},
		{KindBFS, func(p string) error { return WriteOutput(p, g, depths) }, func() (*Output, error) { return NewOutput(KindBFS, g, depths) }},
		{KindWCC, func(p string) error { return WriteOutput(p, g, labels) }, func() (*Output, error) { return NewOutput(KindWCC, g, labels) }},
		{KindSSSP, func(p string) error { return WriteOutput(p, g, dists) }, func() (*Output, error) { return NewOutput(KindSSSP, g, dists) }},
	} {
		t.Run(tc.kind.String(), func(t *testing.T) {
			path := filepath.Join(dir, "out-"+tc.kind.String())
			if err := tc.write(path); err != nil {
				t.Fatal(err)
			}
			got, err := ReadOutput(path, tc.kind)
			if err != nil {
				t.Fatal(err)
			}
			want, err := tc.out()
			if err != nil {
				t.Fatal(err)
			}
			if err := Validate(tc.kind, want, got); err != nil {
				t.Fatal(err)
			}
			if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o644 {
				t.Errorf("output mode %v (%v), want 0644", st.Mode(), err)
			}
		})
	}
}

func TestWriteOutputKeepsOldFileOnError(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "result")
	const old = "1 0.5\n"
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	g := &csr.Graph{N: 3}
	for name, vals := range map[string][]float64{
		"NaN midway":   {0.1, math.NaN(), 0.3},
		"wrong length": {0.1},
	} {
		err := WriteOutput(path, g, vals)
		if err == nil || !strings.Contains(err.Error(), "algo: ") || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v, want an algo error naming %s", name, err, path)
		}
		b, _ := os.ReadFile(path)
		if string(b) != old {
			t.Errorf("%s: existing output changed to %q", name, b)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries after failed writes, want only the old output", len(entries))
	}
	if err := WriteOutput(filepath.Join(dir, "missing", "x"), g, []float64{1, 2, 3}); err == nil {
		t.Error("write into a missing directory succeeded")
	}
	if err := WriteOutput(dir+string(filepath.Separator), g, []float64{1, 2, 3}); err == nil {
		t.Error("write to a directory path succeeded")
	}
}

func TestParseOutput(t *testing.T) {
	good := []struct {
		name  string
		kind  Kind
		input string
		ids   []uint64
		vals  string // fmt %v of the values
	}{
		{"bfs", KindBFS, "1 0\n2 9223372036854775807\n", []uint64{1, 2}, "[0 9223372036854775807]"},
		{"crlf tabs blanks", KindBFS, "\r\n1\t0\r\n\n  2   3  \r\n", []uint64{1, 2}, "[0 3]"},
		{"no final newline", KindBFS, "5 1", []uint64{5}, "[1]"},
		{"empty", KindBFS, "", []uint64{}, "[]"},
		{"sssp infinities", KindSSSP, "1 Infinity\n2 infinity\n3 inf\n4 +Inf\n5 4.2\n", []uint64{1, 2, 3, 4, 5}, "[+Inf +Inf +Inf +Inf 4.2]"},
		{"pr exponents", KindPR, "1 1.477629166666667e-01\n2 5E-3\n", []uint64{1, 2}, "[0.1477629166666667 0.005]"},
		{"wcc unsigned label", KindWCC, "1 18446744073709551615\n2 -1\n", []uint64{1, 2}, "[-1 -1]"},
		{"max id", KindCDLP, "18446744073709551615 3\n", []uint64{math.MaxUint64}, "[3]"},
	}
	for _, tc := range good {
		t.Run(tc.name, func(t *testing.T) {
			o, err := ParseOutput(strings.NewReader(tc.input), "in", tc.kind)
			if err != nil {
				t.Fatal(err)
			}
			vals := fmt.Sprint(o.Ints)
			if tc.kind.isFloat() {
				vals = fmt.Sprint(o.Floats)
			}
			if fmt.Sprint(o.IDs) != fmt.Sprint(tc.ids) || vals != tc.vals {
				t.Fatalf("ids %v values %s, want %v %s", o.IDs, vals, tc.ids, tc.vals)
			}
		})
	}

	bad := []struct {
		name  string
		kind  Kind
		input string
		want  string
	}{
		{"one field", KindBFS, "1 0\n2\n", "in:2: want \"<vertex-id> <value>\""},
		{"three fields", KindPR, "1 0.5 x\n", "in:1: want"},
		{"id not a number", KindBFS, "\nx 1\n", "in:2: vertex id \"x\""},
		{"negative id", KindBFS, "-1 1\n", "in:1: vertex id \"-1\""},
		{"id too big", KindBFS, "18446744073709551616 1\n", "in:1: vertex id"},
		{"float for bfs", KindBFS, "1 1.0\n", "in:1: BFS value \"1.0\" for vertex 1"},
		{"bfs overflow", KindBFS, "1 9223372036854775808\n", "in:1: BFS value"},
		{"label overflow", KindWCC, "1 18446744073709551616\n", "in:1: WCC label"},
		{"nan", KindPR, "1 NaN\n", "in:1: PR value \"NaN\" for vertex 1"},
		{"minus infinity", KindSSSP, "1 -infinity\n", "in:1: SSSP value"},
		{"float overflow", KindLCC, "1 1e400\n", "in:1: LCC value"},
		{"garbage float", KindSSSP, "1 1.0.0\n", "in:1: SSSP value"},
		{"duplicate", KindBFS, "1 0\n2 1\n1 0\n", "in:3: vertex 1 listed again (first on line 1)"},
		{"long line", KindBFS, "1 " + strings.Repeat("0", maxLineBytes+10) + "\n", "in:1: line longer than"},
		{"bad kind", Kind(0), "1 1\n", "invalid output kind"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseOutput(strings.NewReader(tc.input), "in", tc.kind)
			if err == nil || !strings.HasPrefix(err.Error(), "algo: ") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := ReadOutput(filepath.Join(t.TempDir(), "nope"), KindBFS); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("missing file: error %v, want it named", err)
	}
}

func TestParseKind(t *testing.T) {
	for in, want := range map[string]Kind{"bfs": KindBFS, "PR": KindPR, "PageRank": KindPR, "wcc": KindWCC, " SSSP ": KindSSSP, "cdlp": KindCDLP, "LCC": KindLCC} {
		if k, err := ParseKind(in); err != nil || k != want {
			t.Errorf("ParseKind(%q) = %v, %v, want %v", in, k, err, want)
		}
		if k, _ := ParseKind(want.String()); k != want {
			t.Errorf("ParseKind(%v.String()) = %v", want, k)
		}
	}
	if _, err := ParseKind("dfs"); err == nil {
		t.Error("ParseKind(dfs) succeeded")
	}
}

// parse is ParseOutput of a string that must succeed.
func parse(t *testing.T, name string, kind Kind, s string) *Output {
	t.Helper()
	o, err := ParseOutput(strings.NewReader(s), name, kind)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name     string
		kind     Kind
		expected string
		actual   string
		want     []string // fragments of the error; nil means valid
	}{
		{"bfs equal, other order", KindBFS, "1 0\n2 1\n3 9223372036854775807\n", "3 9223372036854775807\n1 0\n2 1\n", nil},
		{"bfs wrong value", KindBFS, "1 0\n2 1\n3 9223372036854775807\n", "1 0\n2 2\n3 9223372036854775807\n",
			[]string{"1 vertices with wrong values", "vertex 2 expected 1 got 2 (act:2)"}},
		{"bfs reached unreachable", KindBFS, "1 0\n3 9223372036854775807\n", "1 0\n3 4\n", []string{"vertex 3 expected 9223372036854775807 got 4"}},
		{"missing vertex", KindBFS, "1 0\n2 1\n3 1\n", "1 0\n3 1\n", []string{"1 vertices missing from act (vertex 2)", "(3 vertices expected, 2 given)"}},
		{"unexpected vertex", KindBFS, "1 0\n", "1 0\n9 1\n", []string{"1 unexpected vertices in act (vertex 9 at act:2)"}},
		{"cdlp exact", KindCDLP, "1 1\n2 1\n", "1 1\n2 2\n", []string{"vertex 2 expected 1 got 2"}},
		{"pr within tolerance", KindPR, "1 0.5\n2 0.25\n3 0\n", "1 0.50004\n2 0.249990\n3 0\n", nil},
		{"pr outside tolerance", KindPR, "1 0.5\n2 0.25\n", "1 0.5001\n2 0.25\n", []string{"vertex 1 expected 5.00000000000000e-01 got 5.00100000000000e-01"}},
		{"pr zero needs zero", KindPR, "1 0\n", "1 1e-300\n", []string{"vertex 1 expected"}},
		{"sssp infinity", KindSSSP, "1 0\n2 Infinity\n", "1 0\n2 infinity\n", nil},
		{"sssp finite for infinity", KindSSSP, "1 0\n2 Infinity\n", "1 0\n2 1e308\n", []string{"vertex 2 expected infinity got 1.00000000000000e+308"}},
		{"sssp infinity for finite", KindSSSP, "1 0\n2 3.5\n", "1 0\n2 inf\n", []string{"vertex 2 expected 3.50000000000000e+00 got infinity"}},
		{"lcc", KindLCC, "1 0.333333333333333\n", "1 0.3333\n", nil},
		{"wcc relabelled", KindWCC, "1 1\n2 1\n3 3\n4 3\n5 5\n", "1 40\n2 40\n3 18446744073709551615\n4 18446744073709551615\n5 0\n", nil},
		{"wcc split", KindWCC, "1 1\n2 1\n3 3\n", "1 1\n2 2\n3 3\n", []string{"1 vertices whose label breaks the expected partition", "vertex 2 (act:2) has label 2 but vertex 1, in the same expected component, has label 1"}},
		{"wcc merged", KindWCC, "1 1\n2 1\n3 3\n", "1 1\n2 1\n3 1\n", []string{"vertex 3 (act:3) has label 1 like vertex 1, but they are in different expected components (3 and 1)"}},
		{"many problems", KindBFS, "1 0\n2 1\n3 1\n4 1\n5 1\n6 1\n7 1\n8 1\n", "1 0\n2 2\n3 2\n4 2\n5 2\n6 2\n7 2\n8 2\n",
			[]string{"7 vertices with wrong values", "vertex 6 expected 1 got 2 (act:6); ...)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(tc.kind, parse(t, "exp", tc.kind, tc.expected), parse(t, "act", tc.kind, tc.actual))
			if tc.want == nil {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.HasPrefix(err.Error(), "algo: "+tc.kind.String()+" output act does not match exp") {
				t.Errorf("error %q lacks the header", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q, want %q", err, w)
				}
			}
		})
	}

	t.Run("duplicates in built outputs", func(t *testing.T) {
		exp := parse(t, "exp", KindBFS, "1 0\n2 1\n")
		act := &Output{Kind: KindBFS, Source: "act", IDs: []uint64{1, 2, 2}, Ints: []int64{0, 1, 1}}
		if err := Validate(KindBFS, exp, act); !contains(err, "1 duplicate vertices in actual output act (vertex 2 at act and act)") {
			t.Errorf("error %v, want the duplicate named", err)
		}
	})
	t.Run("kind and shape", func(t *testing.T) {
		bfs := parse(t, "b", KindBFS, "1 0\n")
		pr := parse(t, "p", KindPR, "1 1\n")
		if err := Validate(KindBFS, bfs, pr); !contains(err, "actual output p is PR") {
			t.Errorf("kind mismatch: %v", err)
		}
		if err := Validate(Kind(42), bfs, bfs); err == nil {
			t.Error("invalid kind accepted")
		}
		if err := Validate(KindBFS, bfs, nil); err == nil {
			t.Error("nil output accepted")
		}
		if err := Validate(KindBFS, bfs, &Output{Kind: KindBFS, IDs: []uint64{1}}); !contains(err, "inconsistent") {
			t.Errorf("inconsistent output: %v", err)
		}
	})
}

func TestNewOutput(t *testing.T) {
	g := &csr.Graph{N: 2, IDs: []uint64{5, 6}}
	if _, err := NewOutput(KindPR, g, []int64{1, 2}); err == nil {
		t.Error("int64 KindPR accepted")
	}
	if _, err := NewOutput(KindBFS, g, []float64{1, 2}); err == nil {
		t.Error("float64 KindBFS accepted")
	}
	if _, err := NewOutput(KindBFS, g, []uint64{1, math.MaxUint64}); !contains(err, "BFS vertex 6") {
		t.Errorf("BFS depth above MaxInt64: %v", err)
	}
	if _, err := NewOutput(KindSSSP, g, []float64{0, math.NaN()}); !contains(err, "SSSP vertex 6") {
		t.Errorf("NaN distance: %v", err)
	}
	if _, err := NewOutput(KindWCC, g, []uint64{1}); err == nil {
		t.Error("short result accepted")
	}
	if _, err := NewOutput(KindWCC, nil, []uint64{1}); err == nil {
		t.Error("nil graph accepted")
	}
	o, err := NewOutput(KindWCC, g, []uint64{math.MaxUint64, 3})
	if err != nil || o.Ints[0] != -1 || o.IDs[1] != 6 || o.Lines != nil {
		t.Errorf("NewOutput = %+v, %v", o, err)
	}
}
