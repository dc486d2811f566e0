package algo

import (
	"math"
	"strings"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/csr"
)

// Algorithms is every kernel DMG runs, one line each. Adding a kernel is a
// file with its vertex program, its serial verifier and its Algorithm, plus
// one line here.
func Algorithms() []Algorithm {
	return []Algorithm{
		pageRankAlgorithm(),
		bfsAlgorithm(),
		wccAlgorithm(),
		ssspAlgorithm(),
		cdlpAlgorithm(),
		lccAlgorithm(),
		tcAlgorithm(),
		bcAlgorithm(),
	}
}

// Algorithm is one kernel as the harness knows it: its names, the graph it
// needs, how its parameters are chosen, its program and its serial
// verifier. Its Kind says how its value words are read (resultWords), and
// so how its results are summarised and written.
type Algorithm struct {
	// Name is the --algo value; Aliases are accepted too.
	Name    string
	Aliases []string
	// Kind is the Graphalytics output kind (file suffix, value format):
	// the kernel's value words are the bits of a float64 for PR, SSSP, LCC
	// and BC, an int64 for BFS and TC, and for WCC and CDLP the dense id of
	// the vertex whose external id is the label.
	Kind Kind
	// Source says the kernel starts at a source vertex; SourceProperty is
	// the Graphalytics property that names it (via csr.Meta).
	Source         bool
	SourceProperty func(m *csr.Meta) (ext uint64, ok bool)
	// Sources says the kernel takes a list of sources (Params.Sources).
	Sources bool
	// Symmetric and Weighted say how the graph must be read;
	// NonNegativeWeights that a negative weight is bad input.
	Symmetric, Weighted, NonNegativeWeights bool
	// Iterative says the kernel runs a number of iterations that
	// Params.Iterations (--iterations) sets.
	Iterative bool
	// Multigraph keeps parallel edges (csr.KeepDuplicates): a directed
	// graph read Symmetric then joins two vertices twice where the input
	// joins them both ways, as CDLP counts them.
	Multigraph bool
	// Configure fills the parameters the user left zero from the
	// Graphalytics properties (m may be nil) or the kernel's defaults, and
	// checks them; Source is the harness's business.
	Configure func(p Params, m *csr.Meta) (Params, error)
	// New is the kernel's program for the parameters in effect.
	New func(p Params) Program
	// Verify checks a result (one value word per vertex of g) with a
	// serial verifier that shares no code with the engine. nil: the kernel
	// has none, and --verify fails.
	Verify func(g *csr.Graph, p Params, vals []uint64) error
	// Sampled checks a result too large for one process to verify whole
	// (--verify on a graph past rank 0's budget): it reads a Sample of the
	// run, taken before iteration SampleAt(p) (the run's end when past
	// its last), and returns what it checked. nil: the kernel has no
	// sampled check, and --verify needs the whole graph.
	Sampled  func(p Params, s *Sample) (string, error)
	SampleAt func(p Params) int
}

// atEnd is SampleAt for a check of the final values: past every
// iteration.
func atEnd(Params) int { return math.MaxInt }

// Sample is what a sampled check (Algorithm.Sampled) reads of a run: a
// few vertices' final values and, as the graph on DM held them at the
// sample's iteration, their in-neighbours, those neighbours' values and
// out-degrees, and the iteration's dangling mass (Spec.Dangling). Sum
// is every final value summed (float kernels).
type Sample struct {
	N uint32
	// Vertices are dense ids, IDs the same vertices' external ids.
	Vertices []uint32
	IDs      []uint64
	Final    []uint64
	// Vertex i's in-neighbours are In[Off[i]:Off[i+1]], with their values
	// Values[Off[i]:Off[i+1]] and out-degrees Degrees[Off[i]:Off[i+1]].
	Off      []int
	In       []uint32
	Values   []uint64
	Degrees  []uint32
	Dangling float64
	Sum      float64
}

// Params are the parameters of one run.
type Params struct {
	// Source is the dense id of the source vertex (Algorithm.Source).
	Source uint32
	// Sources are the dense ids of every source when a kernel that takes
	// several (Algorithm.Sources) was given several; nil means Source
	// alone.
	Sources []uint32
	// Iterations bounds iterative kernels (Algorithm.Iterative).
	Iterations int
	// Damping is PageRank's damping factor.
	Damping float64
}

// AllSources is Sources, or Source alone.
func (p Params) AllSources() []uint32 {
	if len(p.Sources) > 0 {
		return p.Sources
	}
	return []uint32{p.Source}
}

// Lookup finds an algorithm by name or alias, case-insensitively.
func Lookup(name string) (Algorithm, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, a := range Algorithms() {
		if a.Name == n {
			return a, nil
		}
		for _, al := range a.Aliases {
			if al == n {
				return a, nil
			}
		}
	}
	return Algorithm{}, errors.Errorf("algo: unknown algorithm %q; expected one of %s", name, strings.Join(Names(), ", "))
}

// Names lists the algorithms' names.
func Names() []string {
	var out []string
	for _, a := range Algorithms() {
		out = append(out, a.Name)
	}
	return out
}

// VerifyResult runs a's verifier, failing when a has none.
func (a Algorithm) VerifyResult(g *csr.Graph, p Params, vals []uint64) error {
	if a.Verify == nil {
		return errors.Errorf("algo: %s has no serial verifier; --verify cannot check it", a.Name)
	}
	return a.Verify(g, p, vals)
}

// Output turns value words, one per vertex of g, into the Graphalytics
// output of g: a table of its external ids and the values decoded. A
// float NaN or -Inf, or a label that is not a vertex of g, is an error.
func (a Algorithm) Output(g *csr.Graph, vals []uint64) (*Output, error) {
	r, err := readWords(a.Kind, g, vals)
	if err != nil {
		return nil, err
	}
	return r.output()
}

// SummarizeResult is Summarize(a.Output(g, vals)), read from the words in
// place: it allocates nothing per vertex but, for WCC and CDLP, a count
// per vertex (four bytes each). It fails where Output does.
func (a Algorithm) SummarizeResult(g *csr.Graph, vals []uint64) (Summary, error) {
	r, err := readWords(a.Kind, g, vals)
	if err != nil {
		return Summary{}, err
	}
	return summarize(a.Kind, r), nil
}

// WriteResult writes vals as a's Graphalytics output file, the bytes
// FormatOutput writes of the values Output decodes, through outfile.Write
// as WriteOutput does (a regular file goes to a temporary that is
// renamed). It decodes each word as it writes it; values Output rejects
// fail it before anything is written.
func (a Algorithm) WriteResult(path string, g *csr.Graph, vals []uint64) error {
	r, err := readWords(a.Kind, g, vals)
	if err != nil {
		return err
	}
	return writeFile(path, r.format)
}

// noParams is Configure for kernels without parameters.
func noParams(p Params, _ *csr.Meta) (Params, error) { return p, nil }

// Floats decodes value words that hold float64 bits (PageRank, SSSP).
func Floats(words []uint64) []float64 {
	f := make([]float64, len(words))
	for i, x := range words {
		f[i] = math.Float64frombits(x)
	}
	return f
}

// Ints decodes value words that hold integers (BFS depths).
func Ints(words []uint64) []int64 {
	f := make([]int64, len(words))
	for i, x := range words {
		f[i] = int64(x)
	}
	return f
}
