package rank_test

import (
	"runtime"
	"testing"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/job"
	"github.com/dmg-hpc/dmg/rank"
	"github.com/dmg-hpc/dmg/spmd"
)

// An iteration allocates (almost) nothing: workers, endpoints, mergers,
// senders and buffers are made once per job, and nothing is allocated per
// vertex or edge. Measured as the difference in allocations between a run
// of many iterations and one of few, per iteration, over the whole
// in-process job of four ranks (the in-process fabric and collectives,
// the iteration's statistics and buffers that still grow to their
// high-water mark included). The workers are pinned: the count must not
// depend on the host's cores (it did, through decode buffers that grew
// slot by slot, until CI ran on a larger machine).
func TestIterationsDoNotAllocate(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation counts need a full, non-race run")
	}
	path := randomGraph(t, t.TempDir(), 5, 400, 4000)
	a, err := algo.Lookup("pagerank")
	if err != nil {
		t.Fatal(err)
	}
	mallocs := func(iters int) uint64 {
		cfg := job.Config{Graph: path, Kernel: &a, Iterations: iters, Engine: rank.Config{RefRDMin: 4, Workers: 4}}
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		before := ms.Mallocs
		runJob(t, spmd.Roles{CN: 2, MN: 2}, cfg)
		runtime.ReadMemStats(&ms)
		return ms.Mallocs - before
	}
	mallocs(3) // warm up
	few, many := mallocs(5), mallocs(45)
	per := float64(int64(many)-int64(few)) / 40
	t.Logf("%d allocations for 5 iterations, %d for 45: %.1f per iteration", few, many, per)
	if per > 64 {
		t.Errorf("%.1f allocations per iteration; want the engine to reuse what it made", per)
	}
}
