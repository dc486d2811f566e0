package rank_test

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/csr"
	"github.com/dmg-hpc/dmg/dmstore"
	"github.com/dmg-hpc/dmg/job"
	"github.com/dmg-hpc/dmg/rank"
	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/verbs"
	"github.com/dmg-hpc/dmg/verbs/memfab"
)

// The engine against a deliberately simple serial reference: the same
// vertex program, run by reference() below with one loop over the edges
// per iteration and no partitioning, remote memory, frontier forms,
// routing or lanes. Every mode and ablation, on several role layouts and
// on random graphs with hubs, isolated vertices, self-loops, duplicate
// edges and weights, must give the reference's values (bit for bit for
// minima and integer sums, within 1e-12 for PageRank) and the
// reference's number of active vertices in every iteration. The kernels
// of the triangle operator (LCC, TC), which no vertex program expresses,
// are checked by their own serial verifiers instead. The kernels are the
// registry's (algo.Algorithms), and two test kernels.

// reference runs p on g serially and returns its values and the active
// vertices of each iteration.
func reference(g *csr.Graph, p algo.Program) ([]uint64, []uint64) {
	phased, ok := p.(algo.Phased)
	if !ok {
		return referencePhase(g, p, nil)
	}
	var val, counts []uint64
	for p != nil {
		var c []uint64
		val, c = referencePhase(g, p, val)
		counts = append(counts, c...)
		var err error
		if p, err = phased.Next(len(c), val); err != nil {
			panic(err)
		}
	}
	return phased.Result(), counts
}

// referencePhase runs one program, from prev's values when it continues
// a phase (algo.Spec.Continue).
func referencePhase(g *csr.Graph, p algo.Program, prev []uint64) ([]uint64, []uint64) {
	s := p.Spec()
	n := g.N
	val, acc, next := make([]uint64, n), make([]uint64, n), make([]uint64, n)
	active := make([]bool, n)
	if s.Continue {
		copy(val, prev)
	}
	p.Init(0, n, val, active)
	deg := make([]uint32, n)
	for v := range n {
		deg[v] = uint32(g.Degree(v))
	}
	contrib := make([]uint64, n)
	ed, _ := algo.EdgerOf(p)
	bu, _ := algo.BagUpdaterOf(p)
	bags := make([][]uint64, n) // Multiset: every candidate, in no order
	combine := func(a, b uint64) uint64 {
		switch {
		case s.Reduce == algo.Min && s.Float:
			return math.Float64bits(min(math.Float64frombits(a), math.Float64frombits(b)))
		case s.Reduce == algo.Min:
			return min(a, b)
		case s.Float:
			return math.Float64bits(math.Float64frombits(a) + math.Float64frombits(b))
		}
		return a + b
	}
	var counts []uint64
	maxIter := s.Iterations
	if maxIter == 0 {
		maxIter = int(n) + 1
	}
	for it := 0; it < maxIter; it++ {
		var na uint64
		for v := range n {
			if active[v] || s.AllActive {
				na++
			}
		}
		if s.Iterations == 0 && na == 0 {
			break
		}
		counts = append(counts, na)
		dangling := 0.0
		for v := range n {
			if deg[v] == 0 && s.Dangling {
				dangling += math.Float64frombits(val[v])
			}
			acc[v] = s.Identity
		}
		p.Contributions(val, deg, contrib)
		var one [1]uint64
		for u := range n {
			if !active[u] && !s.AllActive {
				continue
			}
			for i := g.Offsets[u]; i < g.Offsets[u+1]; i++ {
				v := g.Dst[i]
				var w float32 = 1
				if g.Weights != nil {
					w = float32(g.Weights[i])
				}
				cand := contrib[u]
				switch s.Edge {
				case algo.AddWeight:
					cand = math.Float64bits(math.Float64frombits(cand) + float64(w))
				case algo.Custom:
					ed.Edges(u, cand, []uint32{v}, []float32{w}, one[:])
					cand = one[0]
				}
				if s.Reduce == algo.Multiset {
					bags[v] = append(bags[v], cand)
					continue
				}
				acc[v] = combine(acc[v], cand)
			}
		}
		itc := &algo.Iteration{Index: it, N: n, Dangling: dangling}
		if s.Reduce == algo.Multiset {
			for v := range n {
				one := []uint64{0}
				bu.UpdateBags(v, algo.Bags{Start: []uint64{0}, End: []uint64{uint64(len(bags[v]))}, Slots: bags[v]}, val[v:v+1], one, itc)
				next[v] = one[0]
				bags[v] = bags[v][:0]
			}
		} else {
			p.Update(acc, val, next, itc)
		}
		for v := range n {
			active[v] = next[v] != val[v]
			val[v] = next[v]
		}
	}
	return val, counts
}

// randomGraph writes a random edge list to dir and returns its path:
// n vertices with sparse external ids (a tenth of them isolated), a
// power-law degree spread with a few hubs, self-loops, duplicate edges and
// weights in (0, 1].
func randomGraph(t testing.TB, dir string, seed uint64, n, m int) string {
	t.Helper()
	return randomGraphWeights(t, dir, seed, n, m, 0)
}

// randomGraphWeights is randomGraph with integer weights 0..maxWeight
// when maxWeight > 0 (which the layouts store in one or two bytes).
func randomGraphWeights(t testing.TB, dir string, seed uint64, n, m, maxWeight int) string {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	pick := func() int {
		// Skewed: small ranks much more often; ranks map to ids by a
		// permutation so hubs are spread over the chunks.
		x := int(float64(n) * math.Pow(r.Float64(), 3))
		return min(x, n-1)
	}
	perm := r.Perm(n)
	live := n - n/10
	id := func(i int) uint64 { return uint64(perm[i%live])*7 + 3 }
	var b strings.Builder
	write := func(u, v int) {
		if maxWeight > 0 {
			fmt.Fprintf(&b, "%d %d %d\n", id(u), id(v), r.IntN(maxWeight+1))
			return
		}
		fmt.Fprintf(&b, "%d %d %.6f\n", id(u), id(v), 0.001+r.Float64())
	}
	for range m {
		u, v := pick(), r.IntN(n)
		if r.IntN(3) == 0 {
			u, v = v, u
		}
		write(u, v)
		switch r.IntN(20) {
		case 0:
			write(u, u) // a self-loop
		case 1:
			write(u, v) // a duplicate
		}
	}
	for i := range 3 { // hubs
		for v := range n / 2 {
			if r.IntN(2) == 0 {
				write(i, v)
			}
		}
	}
	// The isolated vertices still appear in the vertex set: one edge from
	// each to itself is dropped as a self-loop, leaving it isolated.
	for i := live; i < n; i++ {
		fmt.Fprintf(&b, "%d %d 1\n", uint64(perm[i])*7+3, uint64(perm[i])*7+3)
	}
	path := filepath.Join(dir, fmt.Sprintf("g%d-%d.wel", seed, maxWeight))
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runJob executes one job over the in-process fabric and returns rank 0's
// outcome.
func runJob(t testing.TB, roles spmd.Roles, cfg job.Config) *job.Outcome {
	t.Helper()
	out, err := tryJob(roles, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func tryJob(roles spmd.Roles, cfg job.Config) (*job.Outcome, error) {
	cluster := memfab.NewCluster()
	outs := make([]*job.Outcome, roles.Size())
	err := spmd.RunLocal(roles.Size(), func(rt spmd.Runtime) error {
		w, err := spmd.NewWorld(rt, roles)
		if err != nil {
			return err
		}
		c := cfg
		c.KeepGraph = true
		c.Open = func(vc verbs.Config) (verbs.Network, error) { return memfab.Open(cluster, w, vc) }
		if c.Engine.Workers == 0 {
			c.Engine.Workers = 2
		}
		out, err := job.Execute(w, c)
		outs[w.Rank()] = out
		return err
	})
	return outs[0], err
}

// kernelCase is a kernel under test: a registered one or a test kernel.
type kernelCase struct {
	name    string
	algo    string       // a registered algorithm, or "" for prog
	prog    algo.Program // a test kernel, run through the registry's pagerank slot
	graph   csr.Options
	iterate int
	sources []uint64 // external ids (randomGraph's are 7k+3)
}

// The test kernels exercise what the registered ones do not: an integer
// sum (FAA on DM) and a custom edge map (candidates from the ids).

// inDegree counts each vertex's in-edges: one iteration of an integer sum.
type inDegree struct{}

func (inDegree) Spec() algo.Spec {
	return algo.Spec{Reduce: algo.Sum, Identity: 0, Iterations: 1, AllActive: true}
}
func (inDegree) Init(_, _ uint32) (uint64, bool)                { return 0, true }
func (inDegree) Contribution(uint64, uint32) uint64             { return 1 }
func (inDegree) Update(acc, _ uint64, _ *algo.Iteration) uint64 { return acc }

// labelHop propagates minimum labels where an edge adds (dst mod 3): its
// candidates depend on the destination id (algo.Custom).
type labelHop struct{}

func (labelHop) Spec() algo.Spec {
	return algo.Spec{Reduce: algo.Min, Edge: algo.Custom, Identity: math.MaxUint64, Monotone: true}
}
func (labelHop) Init(v, _ uint32) (uint64, bool)                  { return uint64(v) * 4, true }
func (labelHop) Contribution(l uint64, _ uint32) uint64           { return l }
func (labelHop) Update(acc, old uint64, _ *algo.Iteration) uint64 { return min(acc, old) }
func (labelHop) Edges(_ uint32, c uint64, dst []uint32, _ []float32, out []uint64) {
	for i, d := range dst {
		out[i] = c + uint64(d%3)
	}
}

// kernels are every registered kernel, LCC on a symmetrised graph too,
// and the test kernels.
func kernels() []kernelCase {
	var ks []kernelCase
	for _, a := range algo.Algorithms() {
		ks = append(ks, kernelCase{name: a.Name, algo: a.Name})
	}
	return append(ks,
		kernelCase{name: "lcc-undirected", algo: "lcc", graph: csr.Options{Undirected: true}},
		kernelCase{name: "bc-sources", algo: "bc", sources: []uint64{3, 10, 17, 24}},
		kernelCase{name: "indegree", prog: algo.Words[uint64](inDegree{})},
		kernelCase{name: "labelhop", prog: algo.Words[uint64](labelHop{})})
}

// algorithm is the kernel case as the job runs it.
func (k kernelCase) algorithm(t testing.TB) *algo.Algorithm {
	if k.algo != "" {
		a, err := algo.Lookup(k.algo)
		if err != nil {
			t.Fatal(err)
		}
		return &a
	}
	return &algo.Algorithm{Name: k.name, Kind: algo.KindPR,
		Configure: func(p algo.Params, _ *csr.Meta) (algo.Params, error) { return p, nil },
		New:       func(algo.Params) algo.Program { return k.prog }}
}

// variant is an engine configuration every kernel must agree in.
type variant struct {
	name     string
	engine   rank.Config
	layout   dmstore.LayoutConfig
	rowBytes int64 // job.Config.RowBytes
	packed   bool  // job.Config.Packed
	// maxWeight > 0: the graph's weights are integers up to it, and a
	// weighted kernel's layouts store them as weights says.
	maxWeight int
	weights   string
}

func variants() []variant {
	// The shared variants (rank.Variants): the baselines and the
	// breakdown, as the comparisons run them.
	var vs []variant
	shared, err := rank.VariantsNamed("dmg", "naive", "famgraph", "dmg-direct", "dmg-valrd", "dmg-refrd", "dmg-nomerge", "no-stage2")
	if err != nil {
		panic(err)
	}
	for _, sv := range shared {
		v := variant{name: sv.Name}
		if err := sv.Apply(&v.engine); err != nil {
			panic(err)
		}
		vs = append(vs, v)
	}
	return append(vs, []variant{
		// The shares' rows built and loaded in windows of 16-vertex
		// batches, 2 KiB of rows or less each (a window per pass).
		{name: "windowed", layout: dmstore.LayoutConfig{BatchVertices: 16}, rowBytes: 2048},
		// Tasks of two or three whole loading batches (taskSpans), their
		// lists on several MNs.
		{name: "tasks-span-batches", layout: dmstore.LayoutConfig{BatchVertices: 8, Granule: 64}, engine: rank.Config{Batch: 20}},
		{name: "no-pull", engine: rank.Config{NoPull: true}},
		// Index entries read each time, or kept for part of the chunk (a
		// budget of 12 KiB leaves room for some tens of vertices' here).
		{name: "no-entry-cache", engine: rank.Config{NoEntryCache: true}},
		{name: "entry-cache-part", engine: rank.Config{CNMem: 12 << 10}},
		{name: "no-bottom-up", engine: rank.Config{NoBottomUp: true}},
		{name: "remote-pull", engine: rank.Config{RemotePull: true}},
		{name: "remote-pull-always", engine: rank.Config{RemotePull: true, PullDivisor: 1e12, NoBottomUp: true, Workers: 3, Batch: 5}},
		{name: "pull-always", engine: rank.Config{PullDivisor: 1e12}},
		{name: "no-merge-no-doorbell", engine: rank.Config{NoMerge: true, NoDoorbell: true}},
		// The collaborative update in every dense iteration: no value pull.
		{name: "refrd-all", engine: rank.Config{RefRDMin: 1, NoValuePull: true}},
		{name: "puller", engine: rank.Config{RefRDPuller: true, RefRDMin: 1, NoValuePull: true}},
		{name: "valrd-at-mn", engine: rank.Config{ValRDApply: "mn", RefRDMin: 1000, NoValuePull: true}},
		{name: "tiny-mailboxes", engine: rank.Config{ValMailbox: 24, RefMailbox: 48, RefRDMin: 2, NoValuePull: true}},
		{name: "puller-tiny", engine: rank.Config{RefRDPuller: true, ValMailbox: 40, RefMailbox: 48, RefRDMin: 2, NoValuePull: true}},
		// The value pull in every dense iteration (BFS's too), with split
		// hubs; and a graph too large for it.
		{name: "value-pull-always", engine: rank.Config{ValuePullDivisor: 1e12, NoBottomUp: true, HubDegree: 5, Workers: 3, Batch: 5}},
		{name: "value-pull-too-large", engine: rank.Config{ValuePullMax: 8}},
		{name: "value-pull-jacobi", engine: rank.Config{NoRelax: true, ValuePullDivisor: 1e12, Workers: 3, Batch: 5}},
		{name: "value-pull-no-narrow", engine: rank.Config{NoNarrow: true, ValuePullDivisor: 1e12, NoBottomUp: true, HubDegree: 5, Workers: 3, Batch: 5}},
		{name: "hubs", engine: rank.Config{HubDegree: 5, Workers: 3, Batch: 7}},
		{name: "hubs-no-split", engine: rank.Config{HubDegree: 5, NoHubSplit: true, NoSteal: true}},
		{name: "all-sparse", engine: rank.Config{DenseDivisor: 1e-9}},
		{name: "all-sparse-by-value", engine: rank.Config{DenseDivisor: 1e-9, SparseValRDMin: 1}},
		{name: "all-sparse-by-value-tiny", engine: rank.Config{DenseDivisor: 1e-9, SparseValRDMin: 1, ValMailbox: 24}},
		{name: "all-sparse-direct", engine: rank.Config{DenseDivisor: 1e-9, SparseValRDMin: math.MaxUint32}},
		{name: "all-dense", engine: rank.Config{DenseDivisor: 1e12}},
		{name: "one-worker", engine: rank.Config{Workers: 1, Batch: 3, MergeGap: 1}},
		{name: "entry-16-no-inplace", layout: dmstore.LayoutConfig{EntrySize: 16, NoInPlace: true}},
		{name: "entry-64", layout: dmstore.LayoutConfig{EntrySize: 64}, engine: rank.Config{Inflight: 2}},
		// Packed lists (dmstore.LayoutConfig.Packed): read whole, by
		// every path; a split hub's pieces each decode the whole list.
		{name: "packed", packed: true},
		{name: "packed-hubs", packed: true, engine: rank.Config{HubDegree: 5, Workers: 3, Batch: 7}},
		{name: "packed-value-pull-always", packed: true, engine: rank.Config{ValuePullDivisor: 1e12, NoBottomUp: true, HubDegree: 5, Workers: 3, Batch: 5}},
		{name: "packed-all-sparse", packed: true, engine: rank.Config{DenseDivisor: 1e-9}},
		{name: "packed-refrd-all", packed: true, engine: rank.Config{RefRDMin: 1, NoValuePull: true}},
		{name: "packed-entry-16-windowed", packed: true, layout: dmstore.LayoutConfig{EntrySize: 16, BatchVertices: 16}, rowBytes: 2048},
		// Integer weights in one or two bytes (dmstore.WeightCode): more
		// edges in place, 5- and 6-byte records, by every path.
		{name: "weights-uint8", maxWeight: 255, weights: "uint8"},
		{name: "weights-uint16", maxWeight: 65535, weights: "uint16"},
		{name: "weights-uint8-sparse-windowed", maxWeight: 255, weights: "uint8", engine: rank.Config{DenseDivisor: 1e-9}, layout: dmstore.LayoutConfig{BatchVertices: 16}, rowBytes: 2048},
		{name: "weights-uint8-refrd-hubs", maxWeight: 255, weights: "uint8", engine: rank.Config{RefRDMin: 1, NoValuePull: true, HubDegree: 5, Workers: 3, Batch: 7}},
		{name: "weights-uint8-value-pull", maxWeight: 255, weights: "uint8", engine: rank.Config{ValuePullDivisor: 1e12, NoBottomUp: true, HubDegree: 5, Workers: 3, Batch: 5}},
		{name: "weights-uint16-packed", maxWeight: 65535, weights: "uint16", packed: true},
		{name: "weights-uint8-naive", maxWeight: 255, weights: "uint8", engine: rank.Config{Mode: rank.ModeNaive}},
		{name: "weights-uint8-famgraph", maxWeight: 255, weights: "uint8", engine: rank.Config{Mode: rank.ModeFAMGraph}},
	}...)
}

// keepsBags tells the configurations that run a Multiset kernel: the
// design's collaborative update with ValRD applied by the owner (or its
// value pull), and the baselines, which pull the labels.
func keepsBags(c rank.Config) bool {
	if c.Mode == rank.ModeNaive || c.Mode == rank.ModeFAMGraph {
		return true
	}
	return !c.NoCollab && !c.NoValRD && c.ValRDApply != "mn"
}

// refusal is the reason a configuration refuses a kernel with spec s
// before reading anything, as a fragment of the parameter error ("" when
// it runs it): no inbox word holds a multiset.
func refusal(c rank.Config, s algo.Spec) string {
	if s.Reduce == algo.Multiset && !keepsBags(c) {
		return "multiset"
	}
	return ""
}

// expected is the reference's values and active vertices per iteration,
// from reference(); nil values for the triangle operator, which no vertex
// program expresses: its kernels are checked by their own serial
// verifiers (every vertex active in its three iterations).
func expected(g *csr.Graph, p algo.Program) ([]uint64, []uint64) {
	if !p.Spec().Triangles {
		return reference(g, p)
	}
	counts := make([]uint64, algo.TriangleIterations)
	for i := range counts {
		counts[i] = uint64(g.N)
	}
	return nil, counts
}

// check runs kernel k in variant v on the graph at path over roles and
// compares it with the reference.
func check(t *testing.T, path string, roles spmd.Roles, k kernelCase, v variant) {
	t.Helper()
	alg := k.algorithm(t)
	cfg := job.Config{Graph: path, Csr: k.graph, Kernel: alg, Engine: v.engine, Layout: v.layout, RowBytes: v.rowBytes, Sources: k.sources, Packed: v.packed}
	if why := refusal(v.engine, alg.New(algo.Params{}).Spec()); why != "" {
		// The run is refused, as bad input, naming the reason.
		_, err := tryJob(roles, cfg)
		var pe *rank.ParamError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), why) {
			t.Fatalf("%s in variant %s: %v, want a parameter error naming the %s", k.name, v.name, err, why)
		}
		return
	}
	out := runJob(t, roles, cfg)
	if out.Packed != v.packed {
		t.Fatalf("%s in variant %s: lists packed %v, want %v", k.name, v.name, out.Packed, v.packed)
	}
	if want := cmp.Or(v.weights, "float32"); out.Graph.Weights != nil && out.Weights != want {
		t.Fatalf("%s in variant %s: weights stored as %q, want %q", k.name, v.name, out.Weights, want)
	}
	if v.rowBytes > 0 && out.Load.Windows < 2 {
		t.Fatalf("CN 0 loaded its share in %d windows with %d bytes of rows at once; want several", out.Load.Windows, v.rowBytes)
	}
	g := out.Graph
	prog := alg.New(out.Params)
	want, counts := expected(g, prog)
	got := out.Result.Values
	if want == nil {
		if alg.Verify == nil {
			t.Fatalf("%s has no verifier", alg.Name)
		}
		if err := alg.Verify(g, out.Params, got); err != nil {
			t.Fatalf("%s in variant %s: %v", k.name, v.name, err)
		}
	} else if len(got) != len(want) {
		t.Fatalf("%d values for %d vertices", len(got), len(want))
	}
	s := prog.Spec()
	for i := range want {
		if got[i] == want[i] {
			continue
		}
		if s.Reduce == algo.Sum && s.Float {
			x, y := math.Float64frombits(got[i]), math.Float64frombits(want[i])
			if math.Abs(x-y) <= 1e-12*math.Abs(y) {
				continue
			}
		}
		t.Fatalf("vertex %d (id %d): value %#x, the reference %#x", i, g.ExternalID(uint32(i)), got[i], want[i])
	}
	var active []uint64
	for _, it := range out.Result.Iterations {
		active = append(active, it.ActiveVertices)
	}
	if s.Relax && !v.engine.NoRelax {
		// Gauss–Seidel within a CN reaches the fixed point in no more
		// iterations than the reference's Jacobi, from the same start.
		if len(active) > len(counts) || (len(counts) > 0 && (len(active) == 0 || active[0] != counts[0])) {
			t.Fatalf("active vertices per iteration %v, the reference (Jacobi) %v", active, counts)
		}
	} else if !slices.Equal(active, counts) {
		t.Fatalf("active vertices per iteration %v, the reference %v", active, counts)
	}
	if alg.Verify != nil {
		if err := alg.Verify(g, out.Params, got); err != nil {
			t.Fatal(err)
		}
	}
	if len(out.Result.Iterations) > 0 && out.Result.Updates.Candidates == 0 && g.NumEdges() > 0 && s.AllActive {
		t.Fatalf("no candidates counted: %+v", out.Result.Updates)
	}
}

// Every kernel on every role layout, in the default configuration.
func TestEngineAgreesWithReference(t *testing.T) {
	dir := t.TempDir()
	graphs := []string{randomGraph(t, dir, 1, 300, 1500), randomGraph(t, dir, 2, 120, 2000)}
	if testing.Short() {
		graphs = graphs[:1]
	}
	layouts := []spmd.Roles{{CN: 1, MN: 1}, {CN: 1, MN: 2}, {CN: 2, MN: 1}, {CN: 2, MN: 2}, {CN: 3, MN: 1}, {CN: 3, MN: 2}}
	for gi, path := range graphs {
		for _, roles := range layouts {
			for _, k := range kernels() {
				t.Run(fmt.Sprintf("g%d/%s/%s", gi, roles, k.name), func(t *testing.T) {
					check(t, path, roles, k, variant{name: "dmg"})
				})
			}
		}
	}
}

// Every kernel in every mode and ablation, on layouts with several CNs.
func TestEngineVariants(t *testing.T) {
	dir := t.TempDir()
	paths := map[int]string{}
	for _, v := range variants() {
		if paths[v.maxWeight] == "" {
			paths[v.maxWeight] = randomGraphWeights(t, dir, 3, 250, 1800, v.maxWeight)
		}
	}
	layouts := []spmd.Roles{{CN: 2, MN: 1}, {CN: 3, MN: 2}}
	if testing.Short() {
		layouts = layouts[1:]
	}
	for _, roles := range layouts {
		for vi, v := range variants() {
			for ki, k := range kernels() {
				// -short (the race detector's run in CI, 212 s for all of
				// them): each variant with every other kernel, so that
				// every variant and every kernel still runs; the full run
				// takes every pair.
				if testing.Short() && (vi+ki)%2 == 1 {
					continue
				}
				t.Run(fmt.Sprintf("%s/%s/%s", roles, v.name, k.name), func(t *testing.T) {
					check(t, paths[v.maxWeight], roles, k, v)
				})
			}
		}
	}
}

// panicky is a kernel with a bug: it panics when it initialises the last
// vertex, on the CN that owns it only.
type panicky struct{ last uint32 }

func (panicky) Spec() algo.Spec {
	return algo.Spec{Reduce: algo.Sum, Identity: 0, Iterations: 1, AllActive: true}
}
func (p panicky) Init(v, _ uint32) (uint64, bool) {
	if v == p.last {
		panic("panicky: the last vertex")
	}
	return 0, true
}
func (panicky) Contribution(uint64, uint32) uint64             { return 1 }
func (panicky) Update(acc, _ uint64, _ *algo.Iteration) uint64 { return acc }

// A rank that panics (a bug) while the others wait in a collective ends
// the job with an error: it does not close the network, whose barrier
// would wait for ranks that are already past it, so its runtime aborts
// the others.
func TestPanickingRankEndsJob(t *testing.T) {
	path := randomGraph(t, t.TempDir(), 3, 200, 800)
	k := kernelCase{name: "panicky", prog: algo.Words[uint64](panicky{last: 199})}
	done := make(chan error, 1)
	go func() {
		_, err := tryJob(spmd.Roles{CN: 2, MN: 1}, job.Config{Graph: path, Kernel: k.algorithm(t)})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "panicky: the last vertex") {
			t.Fatalf("job = %v, want the panic as its error", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the job still waits 30 s after a rank panicked")
	}
}

// The value pull takes a kernel's busy dense iterations, and only while
// the graph's words fit its bound: the variants above agree on results
// whichever path ran, so this checks which one did.
func TestValuePullChosen(t *testing.T) {
	path := randomGraph(t, t.TempDir(), 5, 300, 3000)
	a, err := algo.Lookup("pagerank")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		engine rank.Config
		roles  spmd.Roles
		want   string
	}{
		{"default", rank.Config{}, spmd.Roles{CN: 2, MN: 1}, "value-pull"},
		{"off", rank.Config{NoValuePull: true}, spmd.Roles{CN: 2, MN: 1}, "collaborative"},
		{"too-large", rank.Config{ValuePullMax: 8 * 299}, spmd.Roles{CN: 2, MN: 1}, "collaborative"},
		{"one-cn", rank.Config{}, spmd.Roles{CN: 1, MN: 1}, "collaborative"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := runJob(t, c.roles, job.Config{Graph: path, Kernel: &a, Engine: c.engine})
			for i, it := range out.Result.Iterations {
				if it.Update != c.want {
					t.Fatalf("iteration %d took the %s path, want %s", i, it.Update, c.want)
				}
			}
		})
	}
}

// A multiset kernel takes the value pull on one CN and on several, and its
// bags then hold one task's edges, not every edge end of the chunk: the
// cache is smaller than with the collaborative update's chunk-wide bag.
func TestValuePullBoundsBags(t *testing.T) {
	path := randomGraph(t, t.TempDir(), 6, 400, 6000)
	a, err := algo.Lookup("cdlp")
	if err != nil {
		t.Fatal(err)
	}
	for _, roles := range []spmd.Roles{{CN: 1, MN: 1}, {CN: 2, MN: 1}} {
		t.Run(roles.String(), func(t *testing.T) {
			run := func(c rank.Config) *rank.Result {
				c.Batch = 16
				return runJob(t, roles, job.Config{Graph: path, Kernel: &a, Engine: c}).Result
			}
			vp, coll := run(rank.Config{}), run(rank.Config{NoValuePull: true})
			for i, it := range vp.Iterations {
				if it.Update != "value-pull" {
					t.Fatalf("iteration %d took the %s path", i, it.Update)
				}
			}
			if !slices.Equal(vp.Values, coll.Values) {
				t.Fatal("the value pull's labels differ from the collaborative update's")
			}
			if vp.MaxCacheBytes >= coll.MaxCacheBytes {
				t.Fatalf("CN cache %d B with the value pull, %d B with the chunk's bag", vp.MaxCacheBytes, coll.MaxCacheBytes)
			}
		})
	}
}

// Relaxed pulls (Gauss–Seidel within a CN), value pulls and local ones,
// carry WCC's smallest label along a path of consecutive ids through a
// whole chunk in one iteration, where Jacobi takes one iteration per
// hop; the labels agree.
func TestRelaxedValuePullConverges(t *testing.T) {
	const n = 400
	var b strings.Builder
	for v := 1; v < n; v++ {
		fmt.Fprintf(&b, "%d %d\n", v-1, v)
	}
	path := filepath.Join(t.TempDir(), "path.el")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := algo.Lookup("wcc")
	if err != nil {
		t.Fatal(err)
	}
	// Two CNs: value pulls throughout. One CN (no value pull) and two
	// without it: the local pulls, every iteration dense and pulling.
	for _, tc := range []struct {
		name  string
		roles spmd.Roles
		c     rank.Config
	}{
		{"value-pull", spmd.Roles{CN: 2, MN: 1}, rank.Config{}},
		{"local-cn1", spmd.Roles{CN: 1, MN: 1}, rank.Config{PullDivisor: 1e12}},
		{"local-cn2", spmd.Roles{CN: 2, MN: 1}, rank.Config{PullDivisor: 1e12, NoValuePull: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func(c rank.Config) *rank.Result {
				c.DenseDivisor = 1e12 // every iteration dense
				return runJob(t, tc.roles, job.Config{Graph: path, Kernel: &a, Engine: c}).Result
			}
			jc := tc.c
			jc.NoRelax = true
			gs, jacobi := run(tc.c), run(jc)
			if !slices.Equal(gs.Values, jacobi.Values) {
				t.Fatal("relaxed and Jacobi labels differ")
			}
			// Across two CNs without the value pull a label crosses the
			// chunk boundary once per iteration, after the relaxed
			// sweep of its chunk.
			if len(jacobi.Iterations) < n/2 || len(gs.Iterations) > 5 {
				t.Fatalf("%d relaxed iterations, %d Jacobi ones, on a path of %d", len(gs.Iterations), len(jacobi.Iterations), n)
			}
		})
	}
}
