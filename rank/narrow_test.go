package rank_test

import (
	"slices"
	"testing"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/job"
	"github.com/dmg-hpc/dmg/rank"
	"github.com/dmg-hpc/dmg/spmd"
)

// The value pull of a kernel whose values are vertex ids (WCC) keeps them
// in 4 bytes more per vertex of the graph and reaches the same labels as
// the gather from the 8-byte words (--no-narrow; the iterations may
// differ, as any relaxed pull's do from run to run); one whose values are
// not ids (SSSP's distances) keeps no copy.
func TestValuePullNarrowsIDs(t *testing.T) {
	for _, c := range []struct {
		kernel string
		extra  uint64 // bytes a vertex of the graph adds to a CN's cache
	}{{"wcc", 4}, {"sssp", 0}} {
		t.Run(c.kernel, func(t *testing.T) {
			a, err := algo.Lookup(c.kernel)
			if err != nil {
				t.Fatal(err)
			}
			run := func(noNarrow bool) *job.Outcome {
				cfg := job.Config{Graph: "kron:12", Kernel: &a, Engine: rank.Config{NoNarrow: noNarrow}}
				return runJob(t, spmd.Roles{CN: 2, MN: 2}, cfg)
			}
			narrow, wide := run(false), run(true)
			if !slices.Equal(narrow.Result.Values, wide.Result.Values) {
				t.Fatal("the labels differ from those gathered from 8-byte words")
			}
			vpull := 0
			for _, it := range narrow.Result.Iterations {
				if it.Update == "value-pull" {
					vpull++
				}
			}
			if vpull == 0 {
				t.Fatal("no value pull ran")
			}
			if got, want := narrow.Result.CacheBytes-wide.Result.CacheBytes, c.extra*narrow.Vertices; got != want {
				t.Fatalf("the CN's cache grew by %d bytes for %d vertices; want %d a vertex", got, narrow.Vertices, c.extra)
			}
		})
	}
}
