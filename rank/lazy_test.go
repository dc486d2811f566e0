package rank_test

import (
	"testing"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/job"
	"github.com/dmg-hpc/dmg/rank"
	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/verbs"
)

// A dense apply leaves its values on DM behind (nobody reads them before
// the end; the results are checked by every engine test): each more
// PageRank iteration writes its contributions for the value pull, 8 B a
// vertex, not its values too (16 B a vertex as before), and a run's
// counters count its own operations, not the load's.
func TestValuesWrittenOnce(t *testing.T) {
	a, err := algo.Lookup("pagerank")
	if err != nil {
		t.Fatal(err)
	}
	written := func(iters int) (uint64, uint64) {
		out := runJob(t, spmd.Roles{CN: 2, MN: 2}, job.Config{Graph: "kron:12", Kernel: &a, Iterations: iters})
		return out.Result.Verbs.BytesWritten, out.Vertices
	}
	w4, n := written(4)
	w12, _ := written(12)
	per := float64(w12-w4) / 8 / float64(n)
	t.Logf("%d bytes written in 4 iterations, %d in 12: %.2f B per vertex per iteration", w4, w12, per)
	if per > 12 {
		t.Fatalf("each more iteration writes %.2f B a vertex; want about 8 (the contributions), not the values too", per)
	}
	if w4 > 96*n { // setup 24 B a vertex, then 8 an iteration
		t.Fatalf("4 iterations wrote %d bytes for %d vertices: the load's writes counted?", w4, n)
	}
}

// The entry caches keep what a dense iteration read of the index: the
// PageRank iterations after the first read their lists only, one round
// trip a task where there were two, and fewer bytes; a budget that holds
// none of it reads as the ablation does.
func TestEntryCacheSavesReads(t *testing.T) {
	a, err := algo.Lookup("pagerank")
	if err != nil {
		t.Fatal(err)
	}
	// run runs 8 iterations and checks how many vertices' entries the
	// CNs kept: all, or none.
	run := func(e rank.Config, all bool) verbs.Counters {
		out := runJob(t, spmd.Roles{CN: 2, MN: 2}, job.Config{Graph: "kron:12", Kernel: &a, Iterations: 8, Engine: e})
		want := uint64(0)
		if all {
			want = out.Vertices
		}
		if out.Result.KeptEntries != want {
			t.Fatalf("%+v: the CNs keep the entries of %d of %d vertices; want %d", e, out.Result.KeptEntries, out.Vertices, want)
		}
		return out.Result.Verbs
	}
	with, without, starved := run(rank.Config{}, true), run(rank.Config{NoEntryCache: true}, false), run(rank.Config{CNMem: 1 << 10}, false)
	t.Logf("round trips %d, %d without the cache, %d with no room; bytes read %d, %d, %d",
		with.RoundTrips, without.RoundTrips, starved.RoundTrips, with.BytesRead, without.BytesRead, starved.BytesRead)
	if 10*with.RoundTrips > 7*without.RoundTrips || with.BytesRead >= without.BytesRead {
		t.Fatalf("with the entry cache: %d round trips and %d bytes read; without: %d and %d: want about half the round trips, and fewer bytes",
			with.RoundTrips, with.BytesRead, without.RoundTrips, without.BytesRead)
	}
	if starved.RoundTrips != without.RoundTrips || starved.BytesRead != without.BytesRead {
		t.Fatalf("a budget with no room for entries: %d round trips and %d bytes read; want the ablation's %d and %d",
			starved.RoundTrips, starved.BytesRead, without.RoundTrips, without.BytesRead)
	}
}

// A traversal's values are read on DM by nobody before the end
// (valuesUnread): its sparse applies write none, and its sparse pushes
// check their candidates for other chunks against the chunks' reached
// bitmaps, dropping those for reached vertices, instead of reading the
// destinations' values. The results are checked by every engine test.
func TestTraversalWritesNoValues(t *testing.T) {
	a, err := algo.Lookup("bfs")
	if err != nil {
		t.Fatal(err)
	}
	out := runJob(t, spmd.Roles{CN: 2, MN: 2}, job.Config{Graph: "kron:12", Kernel: &a})
	n := out.Vertices
	var written, pruned, sparse uint64
	for i, it := range out.Result.Iterations {
		t.Logf("iteration %d: dense %v, %d active edges, %d B written, %d B read, %d pruned",
			i, it.Dense, it.ActiveEdges, it.Verbs.BytesWritten, it.Verbs.BytesRead, it.Updates.Pruned)
		if it.Dense || it.ActiveEdges <= n/64 {
			continue
		}
		sparse++
		written += it.Verbs.BytesWritten
		pruned += it.Updates.Pruned
	}
	if sparse < 2 {
		t.Fatalf("%d sparse iterations with more than |V|/64 active edges; the case wants two", sparse)
	}
	// Their bitmaps, touched logs and hub segments' pairs: 6.6 kB here,
	// where writing the changed values' spans (and catching up the dense
	// iterations' before the second) wrote 71 kB.
	if written > 4*n {
		t.Fatalf("the sparse iterations wrote %d bytes for %d vertices: values written as they change?", written, n)
	}
	if pruned == 0 {
		t.Fatal("the sparse iterations dropped no candidate for a reached vertex")
	}
}

// Nor does anyone read WCC's values on DM before the end (its far words
// bound them, read again from the contributions before a large sparse
// push): set-up writes none. Set-up writes the identity into every inbox
// word (8 B a vertex), WCC its contributions for the value pull (8 more),
// and the mailboxes' cursors; the values were 8 more. The end's catch-up
// is not counted (it follows the run's counters).
func TestSetupWritesNoValues(t *testing.T) {
	for _, c := range []struct {
		kernel string
		perV   uint64 // bytes a vertex set-up writes
	}{{"bfs", 8}, {"wcc", 16}} {
		t.Run(c.kernel, func(t *testing.T) {
			a, err := algo.Lookup(c.kernel)
			if err != nil {
				t.Fatal(err)
			}
			out := runJob(t, spmd.Roles{CN: 2, MN: 2}, job.Config{Graph: "kron:12", Kernel: &a})
			setup := out.Result.Verbs.BytesWritten
			for _, it := range out.Result.Iterations {
				setup -= it.Verbs.BytesWritten
			}
			n := out.Vertices
			t.Logf("set-up wrote %d bytes for %d vertices", setup, n)
			if setup < c.perV*n || setup > c.perV*n+1024 {
				t.Fatalf("set-up wrote %d bytes for %d vertices; want %d a vertex and the mailboxes' few (values written too?)", setup, n, c.perV)
			}
		})
	}
}
