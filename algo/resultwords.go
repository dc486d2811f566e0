// A result as a run leaves it on rank 0, one value word per vertex, read in
// place: its summary and its output file decode each word as they go, so
// that at a billion edges they take neither a copy of the 512 MiB of words
// nor a table of the external ids (Algorithm.SummarizeResult,
// Algorithm.WriteResult).

package algo

import (
	"io"
	"math"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/csr"
)

// resultWords is a result of its kind, one word per vertex of g, read by
// the kind: the bits of a float64 (PR, SSSP, LCC, BC), an int64 (BFS
// depths, TC counts), or the dense id of the vertex whose external id is
// the label (WCC, CDLP).
type resultWords struct {
	kind Kind
	g    *csr.Graph
	w    []uint64
}

var _ entries = resultWords{}

// readWords checks words as an Output of them must be: one per vertex of
// g, no float NaN or -Inf, every label a vertex of g.
func readWords(kind Kind, g *csr.Graph, words []uint64) (resultWords, error) {
	r := resultWords{kind: kind, g: g, w: words}
	if err := checkResult(kind, g, len(words)); err != nil {
		return r, err
	}
	switch {
	case kind.isFloat():
		for i := range words {
			if err := checkFloat(r.floatAt(i)); err != nil {
				return r, errors.Wrapf(err, "algo: %v vertex %d", kind, r.idAt(i))
			}
		}
	case kind.isLabel():
		for i, l := range words {
			if l >= uint64(g.N) {
				return r, errors.Errorf("algo: %v vertex %d has label %d, not a vertex of the %d", kind, r.idAt(i), l, g.N)
			}
		}
	}
	return r, nil
}

func (r resultWords) size() int                { return len(r.w) }
func (r resultWords) idAt(i int) uint64        { return r.g.ExternalID(uint32(i)) }
func (r resultWords) floatAt(i int) float64    { return math.Float64frombits(r.w[i]) }
func (r resultWords) intAt(i int) int64        { return int64(r.w[i]) }
func (r resultWords) labelAt(i int) uint64     { return r.g.ExternalID(uint32(r.w[i])) }
func (r resultWords) format(w io.Writer) error { return writeLines(w, r.g, r.appendAt) }

// labelSizes counts each label's vertices in an array indexed by the
// dense label (readWords checked every label is below g.N): at tens of
// millions of components a map would cost gigabytes.
func (r resultWords) labelSizes() (distinct, largest uint64) {
	count := make([]uint32, r.g.N)
	for _, l := range r.w {
		count[l]++
	}
	for _, c := range count {
		if c > 0 {
			distinct++
			largest = max(largest, uint64(c))
		}
	}
	return distinct, largest
}

// appendAt appends vertex v's value as the output file has it.
func (r resultWords) appendAt(buf []byte, v int) ([]byte, error) {
	switch {
	case r.kind.isFloat():
		return appendValue(buf, r.floatAt(v))
	case r.kind.isLabel():
		return appendValue(buf, r.labelAt(v))
	}
	return appendValue(buf, r.intAt(v))
}

// output decodes the words into an Output of their own.
func (r resultWords) output() (*Output, error) {
	switch {
	case r.kind.isFloat():
		return newOutput(r.kind, r.g, Floats(r.w), true)
	case r.kind.isLabel():
		labels := make([]int64, len(r.w))
		for i := range labels {
			labels[i] = int64(r.labelAt(i))
		}
		return newOutput(r.kind, r.g, labels, true)
	}
	return newOutput(r.kind, r.g, Ints(r.w), true)
}
