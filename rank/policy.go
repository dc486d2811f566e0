package rank

import "strings"

// policy chooses what each iteration does. It is made once per run from
// what does not change during it (the kernel, the mode's abilities, the
// configuration's knobs, the store), and its plan is a pure function of
// what the last boundary told every rank (facts): the same on every rank,
// table-tested in policy_test.go, and printed in the iteration log.
type policy struct {
	// The kernel (algo.Spec and its operator); everyVertex: Update sees
	// every vertex in every iteration, so every iteration is dense.
	allActive, traversal, everyVertex bool
	// reachedBits: a traversal whose values nobody reads on DM during the
	// run (engine.valuesUnread): its sparse pushes may check their
	// candidates against the chunks' reached bitmaps.
	reachedBits bool
	// boundsFar: a kernel whose far words bound the values
	// (engine.boundsValues): its sparse pushes may read them again first.
	boundsFar bool
	// relaxes: a monotone Relax kernel reducing by minimum, not a
	// traversal (its pulls may read values lowered in the same iteration).
	relaxes bool
	// bag, custom, triangles: the multiset operator, a custom edge map
	// (its candidates need the kernel, so they go by value), the triangle
	// operator: none of them takes the remote pull or the sparse ValRD.
	bag, custom, triangles bool

	// The mode: whether its dense iterations pull, and how its candidates
	// for another chunk travel in dense and in sparse iterations.
	pulls                     bool
	remoteDense, remoteSparse remotePath

	// The store and the job.
	edges, vertices     uint64
	hasIn               bool // the in-layout of a directed graph
	hasBits, hasMailbox bool // frontier bitmaps, mailboxes on DM
	cns                 int
	valuePull           bool // the job may take the value pull (engine.valuePulls)

	// The knobs (Config).
	denseDivisor, pullDivisor, valuePullDivisor       float64
	noBottomUp, remotePull, noRelax, noRefRD, noValRD bool
	noCollab                                          bool
}

// facts are what the boundary before an iteration tells its plan.
type facts struct {
	index            int
	activeV, activeE uint64
	// hasTrav: a traversal's frontier candidate is known (bottom-up).
	hasTrav bool
	// valrdAt is who would apply ValRD pairs: the configured or measured
	// choice (statsState.chooseValRD).
	valrdAt string
}

// newPolicy is the policy of engine e's run.
func newPolicy(e *engine) policy {
	c, s := &e.cfg, e.spec
	return policy{
		allActive: s.AllActive, traversal: s.Traversal, everyVertex: s.EveryVertex,
		relaxes: s.Relax && s.Monotone && e.op.IsMin() && !s.Traversal, reachedBits: s.Traversal && e.valuesUnread(),
		boundsFar: e.boundsValues(),
		bag:       e.multi.upd != nil, custom: e.edgr != nil, triangles: s.Triangles,
		pulls:       e.mode.pulls(c, s),
		remoteDense: e.mode.remote(c, true), remoteSparse: e.mode.remote(c, false),
		edges: e.st.Out.Edges, vertices: uint64(e.st.N()),
		hasIn: e.st.In != nil, hasBits: e.st.bits != nil, hasMailbox: e.st.mb != nil,
		cns: e.w.Roles.CN, valuePull: e.vpl.on,
		denseDivisor: c.DenseDivisor, pullDivisor: c.PullDivisor, valuePullDivisor: c.ValuePullDivisor,
		noBottomUp: c.NoBottomUp, remotePull: c.RemotePull, noRelax: c.NoRelax, noRefRD: c.NoRefRD, noValRD: c.NoValRD,
		noCollab: c.NoCollab,
	}
}

// reachedDivisor: a traversal's sparse push checks its candidates against
// the reached bitmaps from |V|/reachedDivisor active edges (plan.reached).
const reachedDivisor = 64

// plan decides iteration f.index: dense or sparse (by its active edges,
// Ligra's direction switch); when dense, whether the local candidates are
// pulled at their destination (busy: most edges active), and whether the
// remote ones are too (the remote pull) or every candidate is (the value
// pull: a third of the edges active, by default); how the rest travel
// (direct, or by mailboxes, their segments by reference or by value, and
// who applies the values).
func (p *policy) plan(f facts) plan {
	dense := p.allActive || p.everyVertex || float64(f.activeE) > float64(p.edges)/p.denseDivisor
	busy := float64(f.activeE) > float64(p.edges)/p.pullDivisor
	vbusy := p.valuePull && dense && float64(f.activeE) > float64(p.edges)/p.valuePullDivisor
	busy = busy || vbusy
	remote := p.remoteSparse
	if dense {
		remote = p.remoteDense
	}
	it := plan{index: f.index, dense: dense, remote: remote, skipIdle: f.activeV < p.vertices/4 && !p.allActive}
	it.pull = dense && (busy || p.traversal || p.allActive) && (p.pulls || p.valuePull)
	it.pullIn = it.pull && p.hasIn
	it.bottomUp = it.pull && p.traversal && !p.noBottomUp && p.hasBits && f.hasTrav
	if it.bottomUp {
		it.remote = viaDirect // nothing is sent; what a sparse push would
	}
	if it.pull && busy && !it.bottomUp && p.remotePull && p.hasMailbox && !p.bag && !p.custom && !p.triangles && p.cns > 1 {
		it.rpull, it.remote = true, viaPull
	}
	if it.pull && vbusy && !it.bottomUp && !it.rpull {
		it.vpull, it.remote = true, viaValues
	}
	// A pull of a Relax kernel, the value pull's or the local one, reads
	// the values its CN lowered earlier in the iteration (Gauss–Seidel).
	it.relax = it.pull && !it.bottomUp && !it.rpull && p.relaxes && !p.noRelax
	if it.remote == viaMailboxes {
		// Custom edge maps go by value: their candidates need the kernel,
		// which the sender has.
		it.refrd, it.valrd = !p.noRefRD && !p.custom, !p.noValRD || p.custom
		if it.valrd {
			it.valrdAt = f.valrdAt
			if p.bag {
				it.valrdAt = "cn" // no inbox word holds a multiset
			}
		}
	}
	it.sparseVal = !dense && it.remote == viaDirect && p.hasMailbox && !p.bag && !p.triangles && !p.noCollab && !p.noValRD
	// A traversal's sparse push checks its candidates for other chunks
	// against their reached bitmaps when they may outnumber the bitmaps'
	// bits by 1/64: the bitmaps cost each CN |V|/8 bytes and a barrier, a
	// candidate sent in vain a remote CAS (24 bytes and more each way), a
	// log entry and its owner's look. Fewer go unchecked.
	it.reached = !dense && p.reachedBits && f.activeE > p.vertices/reachedDivisor
	// So does a kernel whose far words bound its values: it reads them
	// again (8 bytes a vertex of the other chunks) where a value prune
	// would read about as much.
	it.fresh = !dense && p.boundsFar && f.activeE > p.vertices/reachedDivisor
	// Sparse iterations walk the frontier list; everything else the
	// chunk's tasks (AllActive kernels are always dense).
	it.sparseT = !dense
	return it
}

// String is the plan as the iteration log prints it: its direction, then
// what it does besides ("dense pull bottom-up", "sparse push sparse-valrd").
func (p plan) String() string {
	w := []string{"sparse"}
	if p.dense {
		w[0] = "dense"
	}
	if p.pull {
		w = append(w, "pull")
	} else {
		w = append(w, "push")
	}
	for _, f := range []struct {
		on   bool
		name string
	}{
		{p.pullIn, "in-edges"}, {p.bottomUp, "bottom-up"}, {p.rpull, "remote-pull"}, {p.vpull, "value-pull"},
		{p.reached, "reached-bits"}, {p.fresh, "fresh-bounds"}, {p.relax, "relax"}, {p.refrd, "refrd"}, {p.valrd, "valrd@" + p.valrdAt}, {p.sparseVal, "sparse-valrd"},
		{p.skipIdle, "skip-idle"},
	} {
		if f.on {
			w = append(w, f.name)
		}
	}
	return strings.Join(w, " ")
}
