package memfab_test

import (
	"testing"

	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/verbs"
	"github.com/dmg-hpc/dmg/verbs/memfab"
	"github.com/dmg-hpc/dmg/verbs/verbstest"
)

func opener() verbstest.Opener {
	c := memfab.NewCluster()
	return func(w *spmd.World, cfg verbs.Config) (verbs.Network, error) { return memfab.Open(c, w, cfg) }
}

func TestConformance(t *testing.T) {
	verbstest.Run(t, opener(), spmd.Roles{CN: 1, MN: 1}, spmd.Roles{CN: 3, MN: 2})
}

// TestConformanceOneJob runs the suite the way multi-process backends do:
// one network, every check in turn.
func TestConformanceOneJob(t *testing.T) {
	open := opener()
	roles := spmd.Roles{CN: 2, MN: 2}
	err := spmd.RunLocal(roles.Size(), func(rt spmd.Runtime) error {
		w, err := spmd.NewWorld(rt, roles)
		if err != nil {
			return err
		}
		return verbstest.RunRank(w, open, verbs.Config{})
	})
	if err != nil {
		t.Fatalf("%+v", err)
	}
}
