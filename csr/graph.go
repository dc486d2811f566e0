package csr

// Graph is an in-memory compressed sparse row graph with dense uint32 vertex
// ids 0..N-1. It is what the builder produces and what the loader lays out
// on the memory nodes; verifiers and reference implementations read it
// directly.
type Graph struct {
	// N is the number of vertices.
	N uint32
	// Lo is the first vertex with a row in Offsets: 0 for a whole graph.
	// A share's graph (Share.Graph, Share.In, a window's) holds the rows
	// of its own vertices only: Offsets[i] is where vertex Lo+i's row
	// starts, and every vertex outside has an empty row (Off, Degree and
	// Neighbors say so).
	Lo uint32
	// Offsets has N+1 entries (a share's: one more than its rows); the
	// out-edges of v are Dst[Offsets[v-Lo]:Offsets[v-Lo+1]].
	Offsets []uint64
	// Dst holds destination ids, sorted ascending within each vertex.
	Dst []uint32
	// Weights is parallel to Dst, or nil for an unweighted graph.
	Weights []float64
	// IDs maps a dense id to the external 64-bit id (nil means identity,
	// unless the ids are held as a map: ExternalID and ExternalIDs read
	// both).
	IDs []uint64
	// Directed is false when every edge is stored in both directions.
	Directed bool
	// idm, when IDs is nil, holds the external ids as a bitmap of them
	// with ranks instead of a table (OpenShareWith's share of a text
	// input; a staged share's ids are its Share's, in the staging
	// memory).
	idm *idMap
}

// NumEdges is the number of stored (directed) edges.
func (g *Graph) NumEdges() uint64 { return uint64(len(g.Dst)) }

// Off is where the row of v starts in Dst: Offsets[v-Lo], and for a
// vertex outside the rows that Offsets holds, where the rows start (v <
// Lo) or end.
func (g *Graph) Off(v uint32) uint64 {
	if v <= g.Lo {
		return g.Offsets[0]
	}
	i := uint64(v - g.Lo)
	if last := uint64(len(g.Offsets)) - 1; i > last {
		i = last
	}
	return g.Offsets[i]
}

// Row is the range of Dst (and Weights) that holds the out-edges of v.
func (g *Graph) Row(v uint32) (a, b uint64) {
	if g.Lo == 0 && uint64(v)+1 < uint64(len(g.Offsets)) {
		return g.Offsets[v], g.Offsets[v+1] // a whole graph's
	}
	return g.Off(v), g.Off(v + 1)
}

// Degree is the out-degree of v.
func (g *Graph) Degree(v uint32) uint64 {
	a, b := g.Row(v)
	return b - a
}

// Neighbors returns the out-neighbours of v (a sub-slice; do not modify).
func (g *Graph) Neighbors(v uint32) []uint32 {
	a, b := g.Row(v)
	return g.Dst[a:b]
}

// EdgeWeights returns the weights of the out-edges of v, parallel to
// Neighbors(v) (a sub-slice; nil for an unweighted graph).
func (g *Graph) EdgeWeights(v uint32) []float64 {
	if g.Weights == nil {
		return nil
	}
	a, b := g.Row(v)
	return g.Weights[a:b]
}

// ExternalID maps a dense id to the id the input used.
func (g *Graph) ExternalID(v uint32) uint64 {
	switch {
	case g.IDs != nil:
		return g.IDs[v]
	case g.idm != nil:
		return g.idm.external(v)
	}
	return uint64(v)
}

// ExternalIDs returns the external ids by dense id (nil: identity): IDs,
// or a table made from the map that holds them.
func (g *Graph) ExternalIDs() []uint64 {
	if g.IDs == nil && g.idm != nil {
		return g.idm.table()
	}
	return g.IDs
}

// DenseID maps an external id to its dense id. The readers assign dense ids
// in ascending external order, so this is a binary search over IDs; for a
// Graph built elsewhere with unsorted IDs it falls back to a linear scan.
func (g *Graph) DenseID(ext uint64) (uint32, bool) {
	if g.IDs == nil && g.idm != nil {
		return g.idm.dense(ext)
	}
	if g.IDs == nil {
		if ext < uint64(g.N) {
			return uint32(ext), true
		}
		return 0, false
	}
	lo, hi := 0, len(g.IDs)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if g.IDs[mid] < ext {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(g.IDs) && g.IDs[lo] == ext {
		return uint32(lo), true
	}
	for i, id := range g.IDs {
		if id == ext {
			return uint32(i), true
		}
	}
	return 0, false
}

// Transpose is the reverse of g, built the obvious way: sources in
// ascending order, each out-row in its order, so every row of the result
// comes out sorted by (source, weight), as the builder sorts. It keeps g's
// ids and is directed.
func (g *Graph) Transpose() *Graph {
	rows := make([][]uint32, g.N)
	var wrows [][]float64
	if g.Weights != nil {
		wrows = make([][]float64, g.N)
	}
	for u := range g.N {
		for i := g.Offsets[u]; i < g.Offsets[u+1]; i++ {
			v := g.Dst[i]
			rows[v] = append(rows[v], u)
			if wrows != nil {
				wrows[v] = append(wrows[v], g.Weights[i])
			}
		}
	}
	tr := &Graph{N: g.N, Offsets: []uint64{0}, Dst: []uint32{}, IDs: g.IDs, Directed: true}
	if wrows != nil {
		tr.Weights = []float64{}
	}
	for v, r := range rows {
		tr.Dst = append(tr.Dst, r...)
		if wrows != nil {
			tr.Weights = append(tr.Weights, wrows[v]...)
		}
		tr.Offsets = append(tr.Offsets, uint64(len(tr.Dst)))
	}
	return tr
}
