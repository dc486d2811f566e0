package csr

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// convertStagedAll converts spec by cns ranks into out and returns rank
// 0's result, after checking that every rank returned the same.
func convertStagedAll(t *testing.T, spec string, o Options, bo BinaryOptions, cns int, out string, rc func(cn int) *readConfig) (*Converted, error) {
	t.Helper()
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st := newMemStage(cns, 0)
	res, errs := make([]*Converted, cns), make([]error, cns)
	var wg sync.WaitGroup
	for r := range cns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var cfg *readConfig
			if rc != nil {
				cfg = rc(r)
			}
			res[r], errs[r] = convertStaged(spec, o, bo, st.rank(r), r, cns, f, cfg)
		}()
	}
	wg.Wait()
	for r := range cns {
		if (errs[r] == nil) != (errs[0] == nil) || !reflect.DeepEqual(res[r], res[0]) {
			t.Fatalf("rank 0: %+v, %v; rank %d: %+v, %v", res[0], errs[0], r, res[r], errs[r])
		}
	}
	return res[0], errs[0]
}

// A text edge list converted by any number of ranks reads back as the
// graph the text gives, with either duplicate policy, and has the id
// table a one-process conversion writes.
func TestConvertStaged(t *testing.T) {
	el, wel, txt, gz := stagedInputs(t)
	dense := filepath.Join(t.TempDir(), "dense.el")
	var b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&b, "%d %d\n", (i*i)%701, (i*13)%700)
	}
	if err := os.WriteFile(dense, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		path string
		o    Options
		bo   BinaryOptions
	}{
		{"el", el, Options{}, BinaryOptions{}},
		{"dense ids", dense, Options{}, BinaryOptions{}},
		{"wel", wel, Options{}, BinaryOptions{}},
		{"wel float32", wel, Options{}, BinaryOptions{Float32Weights: true}},
		{"wel unweighted", wel, Options{Unweighted: true}, BinaryOptions{}},
		{"wel undirected", wel, Options{Undirected: true}, BinaryOptions{}},
		{"snap drop loops", txt, Options{SelfLoops: DropSelfLoops}, BinaryOptions{}},
		{"el synthetic weights", el, Options{Weighted: true}, BinaryOptions{}},
		{"el nothing kept", el, Options{KeepBytes: -1}, BinaryOptions{}},
		{"gzipped", gz, Options{}, BinaryOptions{}},
	} {
		cnsList := []int{1, 2, 3, 5}
		if testing.Short() {
			cnsList = []int{3}
		}
		for _, cns := range cnsList {
			t.Run(fmt.Sprintf("%s/cn%d", c.name, cns), func(t *testing.T) {
				dir := t.TempDir()
				out := filepath.Join(dir, "par.bel")
				o := c.o
				o.Duplicates, o.Workers = KeepDuplicates, 1+cns%3
				got, err := convertStagedAll(t, c.path, o, c.bo, cns, out, nil)
				if err != nil {
					t.Fatal(err)
				}
				if st, err := os.Stat(out); err != nil || st.Size() != got.Bytes {
					t.Fatalf("%s: %v bytes (%v); the conversion says %d", out, st.Size(), err, got.Bytes)
				}
				// The serial conversion, for its id table and vertex count.
				g, _, err := Open(c.path, o)
				if err != nil {
					t.Fatal(err)
				}
				if got.N != g.N || got.Directed != g.Directed || got.Weighted != (g.Weights != nil) {
					t.Fatalf("converted %+v; the serial reader's graph: N %d directed %v weighted %v", got, g.N, g.Directed, g.Weights != nil)
				}
				serial := filepath.Join(dir, "serial.bel")
				if err := writeBinaryFile(serial, g, c.bo); err != nil {
					t.Fatal(err)
				}
				head := binHeaderSize + 8*len(g.IDs)
				pb, _ := os.ReadFile(out)
				sb, _ := os.ReadFile(serial)
				if string(pb[16:24]) != string(sb[16:24]) || string(pb[binHeaderSize:head]) != string(sb[binHeaderSize:head]) {
					t.Fatalf("the header's vertex count or the id table differs from the serial conversion's")
				}
				for _, dup := range []DupPolicy{KeepDuplicates, DropDuplicates} {
					ro := Options{Duplicates: dup}
					want, _, err := Open(c.path, Options{Undirected: c.o.Undirected, Weighted: c.o.Weighted, Unweighted: c.o.Unweighted, SelfLoops: c.o.SelfLoops, Duplicates: dup})
					if err != nil {
						t.Fatal(err)
					}
					back, _, err := Open(out, ro)
					if err != nil {
						t.Fatal(err)
					}
					if c.bo.Float32Weights {
						for i, w := range want.Weights {
							want.Weights[i] = float64(float32(w))
						}
					}
					if !sameGraph(back, want) {
						t.Fatalf("duplicates %v: the converted graph reads back differently from the text", dup)
					}
				}
			})
		}
	}
}

// writeBinaryFile writes g to path as a binary edge list.
func writeBinaryFile(path string, g *Graph, bo BinaryOptions) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := WriteBinary(f, g, bo); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// sameGraph compares the graphs' structure, ids and weights.
func sameGraph(a, b *Graph) bool {
	return a.N == b.N && a.Directed == b.Directed && reflect.DeepEqual(a.IDs, b.IDs) &&
		reflect.DeepEqual(a.Offsets, b.Offsets) && reflect.DeepEqual(a.Dst, b.Dst) && reflect.DeepEqual(a.Weights, b.Weights)
}

// A bad line fails every rank with its line number in the whole file,
// and dropping parallel edges is refused.
func TestConvertStagedErrors(t *testing.T) {
	var b strings.Builder
	for i := range 2000 {
		if i == 1500 {
			b.WriteString("12 x\n")
			continue
		}
		fmt.Fprintf(&b, "%d %d\n", i, (i*31)%2000)
	}
	p := filepath.Join(t.TempDir(), "bad.el")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out.bel")
	want := p + ":1501: expected a non-negative integer destination vertex id"
	for _, cns := range []int{1, 3, 4} {
		_, err := convertStagedAll(t, p, Options{Duplicates: KeepDuplicates}, BinaryOptions{}, cns, out, func(cn int) *readConfig { return splitConfig(uint64(cns+cn), b.Len()) })
		if err == nil || !IsInputError(err) || !strings.Contains(err.Error(), want) {
			t.Fatalf("%d ranks: %v; want an input error containing %q", cns, err, want)
		}
	}
	_, err := convertStagedAll(t, p, Options{Duplicates: DropDuplicates}, BinaryOptions{}, 2, out, nil)
	if err == nil || !strings.Contains(err.Error(), "parallel edges") {
		t.Fatalf("%v; want the refusal to drop parallel edges", err)
	}
}

// A text edge list converted by any number of ranks, with any options
// and block cuts, reads back as the graph the serial reader makes of the
// text, or fails on every rank with its error, line number included.
func FuzzConvertStaged(f *testing.F) {
	f.Add(byte(0), uint8(2), uint64(0), []byte("1 2\n2 1\n2 2\n2 3\n3 2\n"))
	f.Add(byte(2), uint8(3), uint64(1), []byte("1 2 0.5\n2 1 0.25\n1 2 0.25\n2 1 0.5\n1 1 2\n"))
	f.Add(byte(1+4), uint8(4), uint64(2), []byte("# c\n10 20\n20 30\n30 10\n40 50\n50 40\n4294967296 10\n"))
	f.Add(byte(0), uint8(3), uint64(3), []byte("1 2\n2 3\n3 x\n4 5\n5 y\n"))
	f.Add(byte(2+128+64), uint8(2), uint64(4), []byte("1 2 -0.5\n2 1 3\n1 2 0.25\n2 2 1\n3 1 1\n"))
	f.Add(byte(3+8+16), uint8(5), uint64(5), []byte("1 1\n1 2\n2 2\n\n3 1\n"))
	f.Fuzz(func(t *testing.T, sel byte, cns uint8, split uint64, data []byte) {
		name := []string{"g.txt", "g.el", "g.wel", "g.txt"}[sel%4]
		o, _ := fuzzOptions(sel, split)
		o.Duplicates = KeepDuplicates
		bo := BinaryOptions{Float32Weights: sel&128 != 0}
		dir := t.TempDir()
		p := filepath.Join(dir, name)
		if sel%4 == 3 {
			p += ".gz"
			writeGz(t, p, string(data))
		} else if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		want, _, werr := open(p, serialOpts(o), carefulConfig())
		out := filepath.Join(dir, "out.bel")
		_, cerr := convertStagedAll(t, p, o, bo, 1+int(cns%6), out, func(cn int) *readConfig { return splitConfig(split+uint64(cn), len(data)) })
		if (werr == nil) != (cerr == nil) {
			t.Fatalf("serial reader: %v; conversion: %v", werr, cerr)
		}
		if werr != nil {
			if IsInputError(werr) && werr.Error() != cerr.Error() {
				t.Fatalf("serial reader: %v; conversion: %v", werr, cerr)
			}
			return
		}
		got, _, err := Open(out, Options{Duplicates: KeepDuplicates, AllowNegativeWeights: o.AllowNegativeWeights})
		if err != nil {
			t.Fatal(err)
		}
		if bo.Float32Weights {
			for i, w := range want.Weights {
				want.Weights[i] = float64(float32(w))
			}
		}
		if !sameGraph(got, want) {
			t.Fatalf("the converted graph reads back differently from the text")
		}
	})
}
