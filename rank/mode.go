package rank

import (
	"strings"

	"github.com/dmg-hpc/dmg/algo"
)

// mode is one of the systems the engine can be (DESIGN.md §8): the design
// (dmg.go) and its two baselines (naive.go, famgraph.go). A mode is chosen
// once per job; the engine asks it, never a mode string, how to store, fetch
// and route.
type mode interface {
	String() string
	// plain says the store is the naive plain-CSR layout.
	plain() bool
	// reserve is the DM space per MN the mode's regions need; place puts
	// them in the store from start[m] on.
	reserve(c StoreConfig, chunkMN []int) uint64
	place(st *Store, c StoreConfig, start []uint64) error
	// fetcher is a worker's fetch path: how it reads the adjacency of its
	// tasks' vertices.
	fetcher(wk *worker) (fetcher, error)
	// pulls says dense iterations gather local candidates at their
	// destination instead of pushing them.
	pulls(c *Config, s algo.Spec) bool
	// remote is how candidates for another chunk travel in an iteration.
	remote(c *Config, dense bool) remotePath
	// direct configures the direct updates: every CAS its own doorbell
	// (the naive baseline), touched logs for the owner (the design).
	perOpDirect() bool
	logDirect() bool
	// setup runs once on each CN before the first iteration (famgraph
	// reads the whole index); exchange after the push barrier, refresh
	// after the apply (famgraph's partial accumulators and values), each
	// followed by a barrier of its own when exchanges says so.
	setup(e *engine) error
	exchanges() bool
	exchange(e *engine) error
	refresh(e *engine) error
	// collect folds the remote updates of the lane [lo, hi) into the cache
	// in a dense apply (inbox words, or famgraph's partials).
	collect(e *engine, wk *worker, lo, hi uint32) error
	// cacheBytes is the CN's per-vertex state beyond the engine's own.
	cacheBytes(e *engine) uint64
	// sources is where the mode's value pull finds the sources'
	// contributions (valuepull.go); pullSources readies them before the
	// push, each worker w a share.
	sources() sourceKind
	pullSources(e *engine, wk *worker, w int) error
}

// remotePath is how a candidate for a vertex of another chunk travels.
type remotePath uint8

const (
	viaDirect    remotePath = iota // remote CAS on the inbox word
	viaMailboxes                   // collaborative: RefRD and ValRD
	viaLocalCopy                   // famgraph: every CN accumulates every vertex locally
	viaPull                        // the remote pull: each CN gathers for every chunk (rpull.go)
	viaValues                      // the value pull: each CN reads every chunk's contributions (valuepull.go)
)

func (p remotePath) String() string {
	switch p {
	case viaMailboxes:
		return "collaborative"
	case viaLocalCopy:
		return "local"
	case viaPull:
		return "pull"
	case viaValues:
		return "value-pull"
	}
	return "direct"
}

func parseMode(s string) (mode, error) {
	switch strings.ToLower(s) {
	case ModeDMG, "":
		return dmgMode{}, nil
	case ModeNaive:
		return naiveMode{}, nil
	case ModeFAMGraph:
		return famMode{}, nil
	}
	return nil, paramErrorf("unknown mode %q; expected one of %s", s, strings.Join(Modes, ", "))
}
