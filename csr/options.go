package csr

import (
	"fmt"
	"math"
	"runtime"
	"strings"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/sizes"
)

// LoopPolicy says what the builder does with self-loops (v→v).
type LoopPolicy int

const (
	// KeepSelfLoops keeps self-loops (the default: SNAP and Graphalytics
	// count them as edges). In an undirected graph a self-loop is stored once.
	KeepSelfLoops LoopPolicy = iota
	// DropSelfLoops removes them.
	DropSelfLoops
)

// DupPolicy says what the builder does with parallel edges (the same u→v
// more than once).
type DupPolicy int

const (
	// DropDuplicates keeps one copy of each u→v, the one with the smallest
	// weight (the default). Graphalytics inputs have no parallel edges, so
	// their reference outputs are unaffected; an undirected edge listed in
	// both directions becomes one undirected edge.
	DropDuplicates DupPolicy = iota
	// KeepDuplicates keeps every copy (multigraph semantics).
	KeepDuplicates
)

// Options control reading, generation and building. The zero value is valid
// and means the documented defaults.
type Options struct {
	// Format overrides the format detection from the file name: one of
	// "graphalytics", "snap", "el", "wel", "mtx", "bel" (binary edge list).
	Format string
	// Undirected symmetrises the input (each edge stored in both
	// directions) even when the input says it is directed.
	Undirected bool
	// Weighted asks for edge weights. Inputs without weights (generators,
	// SNAP, .el, pattern .mtx) get deterministic pseudo-random weights in
	// (0, 1], a hash of (Seed, min(u,v), max(u,v)) on the dense ids; inputs
	// that have weights keep theirs.
	Weighted bool
	// Unweighted drops the weights an input has.
	Unweighted bool
	// AllowNegativeWeights accepts negative weights (SSSP needs them
	// non-negative, so they are an input error by default).
	AllowNegativeWeights bool
	// SelfLoops is the self-loop policy (default KeepSelfLoops).
	SelfLoops LoopPolicy
	// Duplicates is the parallel-edge policy (default DropDuplicates).
	Duplicates DupPolicy
	// Seed seeds the generators and synthetic weights.
	Seed uint64
	// Workers is the number of goroutines of the builder and the
	// generators; 0 means GOMAXPROCS. The result does not depend on it.
	Workers int
	// KeepBytes bounds the parsed edges a share reader (OpenShare) keeps
	// from its first pass over a text edge list (SNAP, .el, .wel) or a
	// Graphalytics graph, so
	// that its later passes need not parse the text again: 0 means
	// DefaultKeepBytes (1 GiB), a negative value keeps nothing. An input
	// whose edges do not fit is parsed again. The graph read does not
	// depend on it.
	KeepBytes int64

	// HostReaders is how many readers on this machine each keep a few
	// words per vertex of the whole graph (the compute nodes on this
	// host; 0 or 1: one): a declared vertex count is checked against
	// this machine's memory for all of them (sizes).
	HostReaders int

	// vertexLimit, if non-zero, lowers MaxVertices (fuzz tests use it to
	// keep headers from asking for huge allocations).
	vertexLimit uint64
}

func (o *Options) maxVertices() uint64 {
	if o.vertexLimit != 0 {
		return o.vertexLimit
	}
	return MaxVertices
}

// vertexProblem checks a vertex count that an input declares before
// anything is read (a binary header, a Matrix Market size line, a
// generator's parameters): dense ids are 32-bit (at most max), and every
// compute node keeps a few words per vertex, which this machine must
// hold (sizes). It says what is wrong, or "".
func vertexProblem(n, limit uint64, readers int) string {
	if n > limit {
		return fmt.Sprintf("%d vertices: more than %d; dense ids are 32-bit", n, limit)
	}
	what := fmt.Sprintf("%d vertices", n)
	if readers > 1 {
		what += fmt.Sprintf(" on each of the %d compute nodes on this host", readers)
	}
	if err := sizes.This().Check(what, sizes.Product(n, uint64(max(readers, 1))), sizes.BytesPerVertex); err != nil {
		return strings.TrimPrefix(err.Error(), "sizes: ")
	}
	return ""
}

// EnsureDefaults fills in zero fields and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	return o
}

// Validate checks the options.
func (o *Options) Validate() error {
	switch o.Format {
	case "", FormatGraphalytics, FormatSNAP, FormatEL, FormatWEL, FormatMTX, FormatBinary:
	default:
		return errors.Errorf("csr: unknown format %q (expected graphalytics, snap, el, wel, mtx or bel)", o.Format)
	}
	if o.SelfLoops != KeepSelfLoops && o.SelfLoops != DropSelfLoops {
		return errors.Errorf("csr: bad self-loop policy %d", o.SelfLoops)
	}
	if o.Duplicates != DropDuplicates && o.Duplicates != KeepDuplicates {
		return errors.Errorf("csr: bad duplicate policy %d", o.Duplicates)
	}
	if o.Weighted && o.Unweighted {
		return errors.New("csr: Weighted and Unweighted are exclusive")
	}
	if o.Workers < 0 {
		return errors.Errorf("csr: negative worker count %d", o.Workers)
	}
	return nil
}

// Input format names (Meta.Format, Options.Format).
const (
	FormatGraphalytics = "graphalytics"
	FormatSNAP         = "snap"
	FormatEL           = "el"
	FormatWEL          = "wel"
	FormatMTX          = "mtx"
	FormatBinary       = "bel"
	FormatKron         = "kron"
	FormatUniform      = "uniform"
)

// Meta describes where a graph came from and the algorithm parameters its
// input carries (Graphalytics properties). Source vertices are external ids;
// map them with Graph.DenseID.
type Meta struct {
	// Name is the dataset name (file name without extensions, or the spec).
	Name string
	// Path is the file that was opened (the .properties file for
	// Graphalytics), or the generator spec.
	Path string
	// Format is one of the Format* constants.
	Format string
	// Directed and Weighted describe the built graph.
	Directed, Weighted bool
	// DeclaredVertices and DeclaredEdges are the counts the input declares
	// (Graphalytics meta.vertices/meta.edges, Matrix Market size line, binary
	// header), or 0 if it declares none. Undirected inputs declare each edge
	// once.
	DeclaredVertices, DeclaredEdges uint64
	// InputEdges is the number of edge records read (or generated).
	InputEdges uint64
	// SelfLoops and Duplicates count the stored edges the policies removed.
	DroppedSelfLoops, DroppedDuplicates uint64

	// Algorithms lists the algorithms the input says it supports.
	Algorithms []string
	// HasBFSSource etc. say whether the parameter was given.
	HasBFSSource, HasSSSPSource bool
	BFSSource, SSSPSource       uint64
	HasPR                       bool
	PRDamping                   float64
	PRIterations                int
	HasCDLP                     bool
	CDLPIterations              int
	// Properties holds every Graphalytics property with the
	// "graph.<name>." prefix removed.
	Properties map[string]string
}

// String is a one-line summary.
func (m *Meta) String() string {
	var b strings.Builder
	b.WriteString(m.Format)
	b.WriteString(" ")
	b.WriteString(m.Name)
	if m.Directed {
		b.WriteString(" directed")
	} else {
		b.WriteString(" undirected")
	}
	if m.Weighted {
		b.WriteString(" weighted")
	}
	return b.String()
}

// MaxVertices is the largest vertex count a Graph can hold (dense ids are
// uint32).
const MaxVertices = math.MaxUint32
