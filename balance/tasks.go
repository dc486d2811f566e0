package balance

// Task is one unit of stage-2 work inside a compute node's chunk.
//
// A batch task is a run of consecutive vertices [Lo, Hi) with their whole
// out-lists (EdgeLo = EdgeHi = 0). A hub task is a single vertex Lo
// (Hi = Lo+1) restricted to the edges [EdgeLo, EdgeHi) of its out-list,
// counted from the start of that list; EdgeHi == 0 means the whole list.
type Task struct {
	Lo, Hi         uint32
	EdgeLo, EdgeHi uint64
}

// Whole reports whether t covers the whole out-list of each of its
// vertices (it is not an edge range of a split hub).
func (t Task) Whole() bool { return t.EdgeHi == 0 }

// Edges returns the number of edges t covers; degrees[i] is the degree of
// vertex base+i.
func (t Task) Edges(degrees []uint64, base uint32) uint64 {
	if !t.Whole() {
		return t.EdgeHi - t.EdgeLo
	}
	var e uint64
	for v := t.Lo; v < t.Hi; v++ {
		e += degrees[v-base]
	}
	return e
}

// EdgeRange returns the edges [lo, hi) of vertex t.Lo's out-list that t
// covers, given that vertex's degree.
func (t Task) EdgeRange(degree uint64) (lo, hi uint64) {
	if t.Whole() {
		return 0, degree
	}
	return t.EdgeLo, t.EdgeHi
}

// Tasks cuts a chunk into stage-2 tasks; degrees[i] is the out-degree of
// vertex base+i. Consecutive vertices form batches of at most batch
// vertices (batch < 1 counts as 1), closed early so that no batch holds more
// than hubDegree edges. A vertex of degree above hubDegree is a hub and gets
// tasks of its own: with split, edge ranges of near-equal size, none above
// hubDegree; without, one task with its whole list. hubDegree 0 turns hub
// handling off (batches are cut by vertex count only). The result is
// deterministic, in vertex order, and covers every vertex and every edge
// exactly once.
func Tasks(degrees []uint64, base uint32, batch int, hubDegree uint64, split bool) []Task {
	if batch < 1 {
		batch = 1
	}
	out := make([]Task, 0, len(degrees)/batch+1)
	var (
		start uint32 // first vertex of the open batch
		n     int    // vertices in the open batch
		edges uint64 // edges in the open batch
	)
	closeBatch := func() {
		if n > 0 {
			out = append(out, Task{Lo: start, Hi: start + uint32(n)})
		}
		n, edges = 0, 0
	}
	for i, d := range degrees {
		v := base + uint32(i)
		if hubDegree > 0 && d > hubDegree {
			closeBatch()
			out = appendHub(out, v, d, hubDegree, split)
			continue
		}
		if n == batch || (hubDegree > 0 && n > 0 && edges+d > hubDegree) {
			closeBatch()
		}
		if n == 0 {
			start = v
		}
		n++
		edges += d
	}
	closeBatch()
	return out
}

// appendHub appends the tasks of hub v with degree d > hub.
func appendHub(out []Task, v uint32, d, hub uint64, split bool) []Task {
	if !split {
		return append(out, Task{Lo: v, Hi: v + 1})
	}
	k := (d + hub - 1) / hub // pieces, each at most hub edges
	for i := range k {
		lo, hi := cut(d, i, k), cut(d, i+1, k)
		out = append(out, Task{Lo: v, Hi: v + 1, EdgeLo: lo, EdgeHi: hi})
	}
	return out
}

// cut returns ⌊d·i/k⌋ without overflowing for large d.
func cut(d, i, k uint64) uint64 {
	q, r := d/k, d%k
	return q*i + r*i/k
}

// TaskAlpha is a vertex's cost in edges within a chunk (Gemini's α at
// task scale): a task costs its edges plus TaskAlpha per vertex.
const TaskAlpha = 8

// EdgeCost returns a cost function for Run: the edges of a task plus
// alpha per vertex (Gemini's α·|V|+|E| at task scale); degrees[i] is the
// degree of vertex base+i.
func EdgeCost[D ~uint32 | ~uint64](degrees []D, base uint32, alpha uint64) func(Task) uint64 {
	return func(t Task) uint64 {
		if !t.Whole() {
			return t.EdgeHi - t.EdgeLo + alpha
		}
		var c uint64
		for _, d := range degrees[t.Lo-base : t.Hi-base] {
			c += uint64(d) + alpha
		}
		return c
	}
}

// ListCost is EdgeCost for tasks whose [Lo, Hi) index *list, a list of
// vertices (a sparse frontier), read at each call.
func ListCost[D ~uint32 | ~uint64](list *[]uint32, degrees []D, base uint32, alpha uint64) func(Task) uint64 {
	return func(t Task) uint64 {
		if !t.Whole() {
			return t.EdgeHi - t.EdgeLo + alpha
		}
		var c uint64
		for _, v := range (*list)[t.Lo:t.Hi] {
			c += uint64(degrees[v-base]) + alpha
		}
		return c
	}
}
