package csr

import (
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/dmg-hpc/dmg/balance"
	"github.com/pkg/errors"
)

// memStage is a Stage in memory for cns CN goroutines and mns MN ones:
// its steps are a barrier that hands every rank the CNs' payloads (its
// rounds one of the CNs only), its staging memory one byte slice.
type memStage struct {
	cns, mns int
	steps    *memBarrier
	rounds   *memBarrier
	mu       sync.Mutex
	mem      []byte
	opens    int
}

func newMemStage(cns, mns int) *memStage {
	return &memStage{cns: cns, mns: mns, steps: newMemBarrier(cns, cns+mns), rounds: newMemBarrier(cns, cns)}
}

// memBarrier is a step of n ranks that hands each the first cns ranks'
// payloads, or the first failing rank's error.
type memBarrier struct {
	cns, n  int
	mu      sync.Mutex
	cond    *sync.Cond
	gen     int
	arrived int
	errs    []error
	pays    [][]byte
	out     [][]byte // the last step's CN payloads
	failed  int      // the last step's first failing rank, or -1
	msg     string
}

func newMemBarrier(cns, n int) *memBarrier {
	b := &memBarrier{cns: cns, n: n, errs: make([]error, n), pays: make([][]byte, n)}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// rank is rank r's view (CNs first).
func (s *memStage) rank(r int) Stage { return &memRank{s: s, r: r} }

type memRank struct {
	s *memStage
	r int
}

func (m *memRank) Step(err error, payload []byte) ([][]byte, error) {
	return m.s.steps.step(m.r, err, payload)
}

// Close poisons the memory, which no rank may read again.
func (m *memRank) Close(mem Staging) error {
	if b, ok := mem.(byteStaging); ok {
		m.s.mu.Lock()
		defer m.s.mu.Unlock()
		for i := range b {
			b[i] = 0xa5
		}
	}
	return nil
}

func (m *memRank) Round(err error, payload []byte) ([][]byte, error) {
	if m.r >= m.s.cns {
		return nil, errors.Errorf("rank %d is an MN, which takes no round", m.r)
	}
	return m.s.rounds.step(m.r, err, payload)
}

func (s *memBarrier) step(r int, err error, payload []byte) ([][]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs[r], s.pays[r] = err, slices.Clone(payload)
	gen := s.gen
	if s.arrived++; s.arrived == s.n {
		s.failed, s.msg = -1, ""
		for r, e := range s.errs {
			if e != nil {
				s.failed, s.msg = r, e.Error()
				break
			}
		}
		s.out = slices.Clone(s.pays[:s.cns])
		s.arrived = 0
		s.gen++
		s.cond.Broadcast()
	}
	for s.gen == gen {
		s.cond.Wait()
	}
	switch {
	case err != nil:
		return nil, err
	case s.failed >= 0:
		return nil, errors.Errorf("rank %d failed: %s", s.failed, s.msg)
	}
	return s.out, nil
}

func (m *memRank) Open(bytes uint64) (Staging, error) {
	s := m.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opens%(s.cns+s.mns) == 0 {
		s.mem = make([]byte, bytes)
	} else if uint64(len(s.mem)) != bytes {
		return nil, errors.Errorf("rank %d opens %d bytes, another %d", m.r, bytes, len(s.mem))
	}
	s.opens++
	return byteStaging(s.mem), nil
}

// testCut is a staged read's cut for the tests (a Cutter, one per CN):
// even (about n/cns vertices a chunk), lopsided (every vertex in the
// last chunk, the others empty) or balanced (balance.Chunks's cut, made
// from the CNs' slices of the degrees).
type testCut struct {
	cns  int
	mode string
	n    uint32
	cut  balance.Cut
}

func (c *testCut) Slice(deg []uint64, lo uint32, before uint64, n uint32, edges uint64) ([]Boundary, error) {
	c.n = n
	if c.mode != "balanced" {
		return nil, nil
	}
	c.cut = balance.Cut{Parts: c.cns, Alpha: balance.DefaultAlpha(c.cns), N: n, Edges: edges}
	bs, err := c.cut.Slice(deg, lo, before)
	out := make([]Boundary, len(bs))
	for i, b := range bs {
		out[i] = Boundary(b)
	}
	return out, err
}

func (c *testCut) Cut(placed []Boundary) ([]uint32, error) {
	if c.mode == "balanced" {
		bs := make([]balance.Boundary, len(placed))
		for i, b := range placed {
			bs[i] = balance.Boundary(b)
		}
		return c.cut.Bounds(bs)
	}
	b := make([]uint32, c.cns+1)
	for k := range b {
		b[k] = uint32(uint64(c.n) * uint64(k) / uint64(c.cns))
		if c.mode == "lopsided" && k < c.cns {
			b[k] = 0
		}
	}
	return b, nil
}

// stagedShares reads spec staged by cns CNs (and mns MNs serving) and
// returns every CN's share, or the error of CN 0 after checking that
// every rank failed alike.
func stagedShares(t *testing.T, spec string, o Options, so ShareOptions, cns, mns int, cut string, rc func(cn int) *readConfig) ([]*Share, []*Meta, error) {
	t.Helper()
	st := newMemStage(cns, mns)
	shares, metas, errs := make([]*Share, cns), make([]*Meta, cns), make([]error, cns+mns)
	var wg sync.WaitGroup
	for r := range cns + mns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r >= cns {
				errs[r] = ServeStaged(st.rank(r))
				return
			}
			var cfg *readConfig // each CN its own (a config's cuts are not safe for concurrent use)
			if rc != nil {
				cfg = rc(r)
			}
			shares[r], metas[r], errs[r] = openStaged(spec, o, so, &testCut{cns: cns, mode: cut}, st.rank(r), r, cns, cfg)
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if (err == nil) != (errs[0] == nil) {
			t.Fatalf("rank 0: %v; rank %d: %v", errs[0], r, err)
		}
	}
	return shares, metas, errs[0]
}

// The staged shares of a graph are the shares OpenShareWith reads, for
// every number of CNs, with and without kept edges, in-edges and windows.
func TestStagedMatchesShare(t *testing.T) {
	el, wel, _, gz := stagedInputs(t)
	sel, swel := mappedInputs(t, ".sparse", el, wel, func(x uint64) uint64 { return x*1_000_000_000 + x })
	del, _ := mappedInputs(t, ".dense", el, wel, func(x uint64) uint64 { return x / 1000 * 2 })
	for _, c := range []struct {
		name string
		path string
		o    Options
		so   ShareOptions
	}{
		{"el", el, Options{}, ShareOptions{}},
		{"el in-edges", el, Options{}, ShareOptions{In: true}},
		{"wel in-edges", wel, Options{}, ShareOptions{In: true}},
		{"wel undirected", wel, Options{Undirected: true}, ShareOptions{}},
		{"el drop loops keep dups", el, Options{SelfLoops: DropSelfLoops, Duplicates: KeepDuplicates}, ShareOptions{In: true}},
		{"el nothing kept", el, Options{KeepBytes: -1}, ShareOptions{In: true}},
		{"el kept overflows", el, Options{KeepBytes: 4000}, ShareOptions{In: true}},
		{"wel windows", wel, Options{}, ShareOptions{In: true, RowBytes: 8000, Align: 4}},
		{"txt gzipped", gz, Options{}, ShareOptions{In: true}},
		{"el synthetic weights", el, Options{Weighted: true}, ShareOptions{}},
		{"sparse el", sel, Options{}, ShareOptions{In: true}},
		{"sparse el nothing kept", sel, Options{KeepBytes: -1}, ShareOptions{In: true}},
		{"sparse wel kept overflows", swel, Options{KeepBytes: 4000}, ShareOptions{In: true}},
		{"sparse wel undirected windows", swel, Options{Undirected: true}, ShareOptions{RowBytes: 8000, Align: 4}},
		{"el second staging memory", el, Options{}, ShareOptions{In: true}},
		{"dense el", del, Options{}, ShareOptions{In: true}},
		{"dense el nothing kept", del, Options{KeepBytes: -1}, ShareOptions{}},
		{"sparse el second staging memory", sel, Options{KeepBytes: -1}, ShareOptions{}},
		// Generators: each CN generates its blocks (kron:13 has 2, the
		// uniform graphs 4 and 1), every vertex a vertex, isolated or not.
		{"kron", "kron:13", Options{Seed: 3}, ShareOptions{In: true}},
		{"kron nothing kept", "kron:13", Options{KeepBytes: -1}, ShareOptions{In: true}},
		// Not kept, a generator's blocks are generated again for every
		// pass that reads them (no spill): weights and windows alike.
		{"kron weighted nothing kept windows", "kron:13", Options{KeepBytes: -1, Weighted: true}, ShareOptions{In: true, RowBytes: 60_000, Align: 4}},
		{"kron kept overflows", "kron:13", Options{KeepBytes: 300_000}, ShareOptions{In: true}},
		{"kron undirected windows", "kron:13", Options{Undirected: true, Weighted: true}, ShareOptions{RowBytes: 60_000, Align: 4}},
		{"kron drop loops nothing kept windows", "kron:13", Options{KeepBytes: -1, SelfLoops: DropSelfLoops}, ShareOptions{In: true, RowBytes: 60_000, WindowBytes: 8000, Align: 4}},
		{"uniform drop loops keep dups", "uniform:3000:200000", Options{SelfLoops: DropSelfLoops, Duplicates: KeepDuplicates}, ShareOptions{In: true}},
		{"uniform mostly isolated", "uniform:100000:1000", Options{}, ShareOptions{In: true}},
		// Rounds (StageBytes): the edges meet their owners a range of
		// every chunk at a time, each round routed anew in every sweep of
		// the windows, from kept, spilled or generated edges.
		{"kron rounds", "kron:13", Options{KeepBytes: -1}, ShareOptions{In: true, StageBytes: 400_000, Align: 4}},
		{"kron rounds and windows", "kron:13", Options{KeepBytes: -1, Weighted: true}, ShareOptions{In: true, RowBytes: 60_000, StageBytes: 900_000, Align: 4}},
		{"kron rounds and small windows unweighted", "kron:13", Options{KeepBytes: -1}, ShareOptions{In: true, RowBytes: 60_000, WindowBytes: 8000, StageBytes: 900_000, Align: 4}},
		{"kron rounds and small windows", "kron:13", Options{KeepBytes: -1, Weighted: true}, ShareOptions{In: true, RowBytes: 60_000, WindowBytes: 8000, StageBytes: 900_000, Align: 4}},
		{"kron undirected small windows", "kron:13", Options{KeepBytes: -1, Undirected: true}, ShareOptions{RowBytes: 60_000, WindowBytes: 8000, Align: 4}},
		{"kron undirected rounds", "kron:13", Options{Undirected: true}, ShareOptions{StageBytes: 300_000, Align: 4}},
		{"el rounds", el, Options{}, ShareOptions{In: true, StageBytes: 3000, Align: 4}},
		{"sparse wel rounds nothing kept", swel, Options{KeepBytes: -1}, ShareOptions{In: true, StageBytes: 5000, Align: 2}},
		{"el out-rows rounds", el, Options{SelfLoops: DropSelfLoops}, ShareOptions{StageBytes: 2000}},
		// 8-byte records, which ids past 27 bits take (records.go).
		{"el rounds 8-byte records", el, Options{}, ShareOptions{In: true, StageBytes: 3000, Align: 4}},
		{"kron rounds and small windows 8-byte records", "kron:13", Options{KeepBytes: -1}, ShareOptions{In: true, RowBytes: 60_000, WindowBytes: 8000, StageBytes: 900_000, Align: 4}},
	} {
		cnsList, cuts := []int{1, 2, 3, 5}, []string{"even", "lopsided", "balanced"}
		if testing.Short() { // -race in CI: two CN counts, one cut each
			cnsList, cuts = []int{2, 3}, []string{"balanced"}
		}
		for _, cns := range cnsList {
			for _, cut := range cuts {
				if testing.Short() && cns == 3 {
					cut = "lopsided"
				}
				t.Run(fmt.Sprintf("%s/cn%d/%s", c.name, cns, cut), func(t *testing.T) {
					c.o.Workers = 1 + cns%3
					var rc func(int) *readConfig
					if strings.Contains(c.name, "second staging memory") { // room for 10 vertices in the first
						rc = func(int) *readConfig { return &readConfig{vertexBound: 10} }
					}
					if strings.Contains(c.name, "8-byte records") {
						rc = func(int) *readConfig { return &readConfig{wideRecords: true} }
					}
					shares, metas, err := stagedShares(t, c.path, c.o, c.so, cns, 1+cns%2, cut, rc)
					if err != nil {
						t.Fatal(err)
					}
					if c.so.StageBytes > 0 {
						shares = sweepRounds(t, shares)
					}
					for k, sh := range shares {
						want, wmeta, err := OpenShareWith(c.path, c.o, c.so, func(deg []uint64) (uint32, uint32, error) {
							if cut == "balanced" { // the same cut from the whole degrees
								b, err := balance.Chunks(deg, cns, balance.DefaultAlpha(cns))
								if err != nil {
									return 0, 0, err
								}
								return b[k], b[k+1], nil
							}
							return sh.Lo, sh.Hi, nil
						})
						if err == nil && c.so.StageBytes > 0 { // as sh is (sweepRounds)
							want, err = assemble(want)
						}
						if err != nil {
							t.Fatal(err)
						}
						sameShare(t, k, sh, want)
						if !reflect.DeepEqual(metas[k], wmeta) {
							t.Fatalf("CN %d: meta %+v, OpenShareWith's %+v", k, metas[k], wmeta)
						}
						sh.Free()
					}
				})
			}
		}
	}
}

// stagedInputs writes one graph as g.el, g.wel (weighted), g.txt (SNAP)
// and g.txt.gz: a power-law-ish graph with a hub, self-loops, parallel
// edges, comments, sparse ids and ids that only appear as destinations.
func stagedInputs(t *testing.T) (el, wel, txt, gz string) {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	for i := range 3000 {
		s := uint64(i*i) % 997
		d := uint64(i*7919) % 1009
		if i%5 == 0 {
			s = 3 // a hub
		}
		if i%97 == 0 {
			d = s // a self-loop
		}
		fmt.Fprintf(&b, "%d %d %g\n", s*1000+7, d*1000+7, float64(i%13)/4)
		if i%11 == 0 {
			fmt.Fprintf(&b, "%d %d %g\n", s*1000+7, d*1000+7, float64(i%7)/4) // a duplicate
		}
		if i%500 == 0 {
			b.WriteString("# a comment\n")
		}
	}
	el = filepath.Join(dir, "g.el")
	wel = filepath.Join(dir, "g.wel")
	txt = filepath.Join(dir, "g.txt")
	var plain strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if f := strings.Fields(line); len(f) == 3 {
			plain.WriteString(f[0] + " " + f[1] + "\n")
		} else {
			plain.WriteString(line + "\n")
		}
	}
	for p, s := range map[string]string{el: plain.String(), wel: b.String(), txt: plain.String()} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gz = filepath.Join(dir, "g.txt.gz")
	writeGz(t, gz, plain.String())
	return el, wel, txt, gz
}

// mappedInputs writes el and wel again with every id x as f(x), in files
// named with suffix: x·10⁹+x gives ids too sparse for a bitmap (the
// staged read's ids meet as sorted lists), x/1000·2 even ids to 2016, dense
// enough for a CN to map every slice in one pass.
func mappedInputs(t *testing.T, suffix, el, wel string, id func(uint64) uint64) (mel, mwel string) {
	t.Helper()
	out := [2]string{}
	for i, path := range []string{el, wel} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var w strings.Builder
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 || strings.HasPrefix(line, "#") {
				w.WriteString(line + "\n")
				continue
			}
			for j := range 2 {
				x, err := strconv.ParseUint(f[j], 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				f[j] = strconv.FormatUint(id(x), 10)
			}
			w.WriteString(strings.Join(f, " ") + "\n")
		}
		out[i] = strings.TrimSuffix(path, filepath.Ext(path)) + suffix + filepath.Ext(path)
		if err := os.WriteFile(out[i], []byte(w.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out[0], out[1]
}

// sweepRounds assembles the windows of every CN's share (in rounds,
// they take them together), twice, as a job measures and then loads
// them: the sweeps must agree.
func sweepRounds(t *testing.T, shares []*Share) []*Share {
	t.Helper()
	out := make([][2]*Share, len(shares))
	errs := make([]error, len(shares))
	var wg sync.WaitGroup
	for k, sh := range shares {
		wg.Go(func() {
			for i := range 2 {
				if out[k][i], errs[k] = assemble(sh); errs[k] != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	whole := make([]*Share, len(shares))
	for k, sh := range shares {
		if sh.win == nil || sh.win.sweep == nil || sh.win.sweep.r < 2 {
			t.Fatalf("CN %d: the share is not read in rounds", k)
		}
		if errs[k] != nil {
			t.Fatalf("CN %d: %v", k, errs[k])
		}
		if !shares[k].Windowed() {
			t.Fatalf("CN %d: a share in rounds is not windowed", k)
		}
		a, b := out[k][0], out[k][1]
		if !reflect.DeepEqual(rowsOf(a.Graph), rowsOf(b.Graph)) || !reflect.DeepEqual(rowsOf(a.In), rowsOf(b.In)) {
			t.Fatalf("CN %d: two sweeps of the rounds differ", k)
		}
		whole[k] = b
	}
	return whole
}

// sameShare fails unless the staged share got is want: rows (assembled
// from their windows), in-rows, bounds and degrees.
func sameShare(t *testing.T, k int, got, want *Share) {
	t.Helper()
	var err error
	if got.Windowed() != want.Windowed() {
		t.Fatalf("CN %d: windowed %v, OpenShareWith's %v", k, got.Windowed(), want.Windowed())
	}
	if got.Windowed() {
		// Twice, as a job sweeps them (to measure, then to load): in
		// rounds, the second sweep goes down them (rounds.go).
		var first *Share
		if first, err = assemble(got); err == nil {
			if got, err = assemble(got); err == nil {
				want, err = assemble(want)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(rowsOf(first.Graph), rowsOf(got.Graph)) || !reflect.DeepEqual(rowsOf(first.In), rowsOf(got.In)) {
			t.Fatalf("CN %d: the second sweep's rows differ from the first's", k)
		}
	}
	if got.Lo != want.Lo || got.Hi != want.Hi || !slices.Equal(got.Degrees, want.Degrees) || got.Top != want.Top {
		t.Fatalf("CN %d: [%d, %d) degrees %v top %d; OpenShareWith's [%d, %d) %v %d", k, got.Lo, got.Hi, got.Degrees, got.Top, want.Lo, want.Hi, want.Degrees, want.Top)
	}
	if !reflect.DeepEqual(rowsOf(got.Graph), rowsOf(want.Graph)) {
		t.Fatalf("CN %d: the rows differ from OpenShareWith's", k)
	}
	if (got.In == got.Graph) != (want.In == want.Graph) || !reflect.DeepEqual(rowsOf(got.In), rowsOf(want.In)) {
		t.Fatalf("CN %d: the in-rows differ from OpenShareWith's", k)
	}
	if !sameShareIDs(got, want.Graph) {
		t.Fatalf("CN %d: the ids differ from OpenShareWith's", k)
	}
}

func writeGz(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// A bad line in any CN's range is reported by every rank with its line
// number in the whole file, the first bad line when there are several.
func TestStagedBadLine(t *testing.T) {
	var b strings.Builder
	for i := range 2000 {
		switch i {
		case 1500:
			b.WriteString("12 x\n")
		case 1700:
			b.WriteString("1 2 3\n")
		default:
			fmt.Fprintf(&b, "%d %d\n", i, (i*31)%2000)
		}
	}
	p := filepath.Join(t.TempDir(), "bad.el")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	want := p + ":1501: expected a non-negative integer destination vertex id"
	for _, cns := range []int{1, 2, 3, 4, 7} {
		_, _, err := stagedShares(t, p, Options{Workers: 2}, ShareOptions{}, cns, 2, "balanced", func(cn int) *readConfig { return splitConfig(uint64(cns+cn), b.Len()) })
		if err == nil || !IsInputError(err) || !strings.Contains(err.Error(), want) {
			t.Fatalf("%d CNs: %v; want an input error containing %q", cns, err, want)
		}
	}
}

// A missing file fails every rank, with the same steps on the MNs.
func TestStagedMissingFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "none.el")
	_, _, err := stagedShares(t, p, Options{}, ShareOptions{}, 3, 2, "even", nil)
	if err == nil || !strings.Contains(err.Error(), "none.el") {
		t.Fatalf("%v; want an error naming none.el", err)
	}
}

// The byte ranges of the CNs cover a file exactly, each starting at a
// line, whatever the number of CNs.
func TestRangeOf(t *testing.T) {
	for _, data := range []string{"", "1 2\n", "1 2\n3 4\n5 6\n", "10 20\n30 40", "\n\n\n1 2\n\n", "123456789 1\n2 3\n"} {
		for cns := 1; cns <= 8; cns++ {
			f := strings.NewReader(data)
			end := int64(0)
			for c := range cns {
				a, b, err := rangeOf(f, int64(len(data)), c, cns)
				if err != nil {
					t.Fatal(err)
				}
				if a != end || b < a || (a > 0 && a < int64(len(data)) && data[a-1] != '\n') {
					t.Fatalf("%q, %d CNs: CN %d has [%d, %d) after %d", data, cns, c, a, b, end)
				}
				end = b
			}
			if end != int64(len(data)) {
				t.Fatalf("%q, %d CNs: the ranges end at %d", data, cns, end)
			}
		}
	}
}

// A staged read of any text edge list, by any number of CNs, with any
// options, gives every CN the whole graph's rows of its chunk (and the
// transpose's, asked for them), or fails on every rank with the error
// the serial whole-graph reader gives, line number included.
func FuzzStaged(f *testing.F) {
	f.Add(byte(0), uint8(2), uint64(0), []byte("1 2\n2 1\n2 2\n2 3\n3 2\n"))
	f.Add(byte(2), uint8(3), uint64(1), []byte("1 2 0.5\n2 1 0.25\n1 2 0.25\n2 1 0.5\n1 1 2\n"))
	f.Add(byte(1), uint8(4), uint64(2), []byte("# c\n10 20\n20 30\n30 10\n40 50\n50 40\n4294967296 10\n"))
	f.Add(byte(0), uint8(3), uint64(3), []byte("1 2\n2 3\n3 x\n4 5\n5 y\n"))
	f.Add(byte(2), uint8(2), uint64(4+9), []byte("1 2 0.5\n2 1 3\n1 2 0.25\n2 2 1\n3 1 1\n"))
	f.Add(byte(0x11), uint8(5), uint64(5), []byte("1 1\n1 2\n2 2\n\n3 1\n"))
	f.Fuzz(func(t *testing.T, sel byte, cns uint8, split uint64, data []byte) {
		name := []string{"g.txt", "g.el", "g.wel", "g.txt"}[sel%4]
		o, so := fuzzOptions(sel, split)
		p := filepath.Join(t.TempDir(), name)
		if sel%4 == 3 {
			p += ".gz"
			writeGz(t, p, string(data))
		} else if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		full, _, ferr := open(p, serialOpts(o), carefulConfig())
		n := 1 + int(cns%6)
		shares, _, serr := stagedShares(t, p, o, so, n, 1+int(cns/6%2), []string{"even", "lopsided", "balanced"}[split/2%3], func(cn int) *readConfig {
			rc := splitConfig(split+uint64(cn), len(data))
			if split%5 == 4 { // room for fewer vertices in the first staging memory: a second
				rc.vertexBound = 1 + split%3
			}
			return rc
		})
		if (ferr == nil) != (serr == nil) {
			t.Fatalf("whole graph: %v; staged: %v", ferr, serr)
		}
		if ferr != nil {
			if IsInputError(ferr) && ferr.Error() != serr.Error() {
				t.Fatalf("whole graph: %v; staged: %v", ferr, serr)
			}
			return
		}
		tr := full.Transpose()
		for _, sh := range shares {
			whole, err := sweptWhole(t, sh)
			if err != nil {
				t.Fatal(err)
			}
			checkShareRows(t, whole, full)
			sh.Free()
			sh = whole
			if sel&128 == 0 {
				checkIn(t, sh, full, tr)
			}
		}
	})
}

// Each CN's progress counts its own byte range: the totals add up to
// the file, and every CN ends done.
func TestStagedProgress(t *testing.T) {
	var b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&b, "%d %d\n", i, (i*17)%5000)
	}
	p := filepath.Join(t.TempDir(), "g.el")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	const cns = 3
	var mu sync.Mutex
	done, total := make([]int64, cns), make([]int64, cns)
	st := newMemStage(cns, 1)
	var wg sync.WaitGroup
	errs := make([]error, cns+1)
	for r := range cns + 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r == cns {
				errs[r] = ServeStaged(st.rank(r))
				return
			}
			so := ShareOptions{Progress: func(d, tot int64) {
				mu.Lock()
				done[r], total[r] = d, tot
				mu.Unlock()
			}}
			var sh *Share
			sh, _, errs[r] = OpenStaged(p, Options{}, so, &testCut{cns: cns, mode: "even"}, st.rank(r), r, cns)
			sh.Free()
		}()
	}
	wg.Wait()
	var sum int64
	for r := range cns {
		if errs[r] != nil {
			t.Fatal(errs[r])
		}
		if done[r] != total[r] || total[r] == 0 {
			t.Fatalf("CN %d: %d of %d bytes", r, done[r], total[r])
		}
		sum += total[r]
	}
	if sum != int64(b.Len()) {
		t.Fatalf("the CNs' totals add up to %d bytes of %d", sum, b.Len())
	}
}

// rowsOf is g without its ids (a staged share's are in the staging
// memory, an OpenShareWith share's in its graph): sameShare compares
// them apart.
func rowsOf(g *Graph) *Graph {
	if g == nil {
		return nil
	}
	r := *g
	r.IDs, r.idm = nil, nil
	return &r
}
