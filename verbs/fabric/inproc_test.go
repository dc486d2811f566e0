package fabric_test

import (
	"errors"
	"testing"

	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/verbs"
	"github.com/dmg-hpc/dmg/verbs/fabric"
	"github.com/dmg-hpc/dmg/verbs/verbstest"
)

func open(w *spmd.World, cfg verbs.Config) (verbs.Network, error) { return fabric.Open(w, cfg) }

func TestInProcessShm(t *testing.T) {
	roles := spmd.Roles{CN: 2, MN: 1}
	err := spmd.RunLocal(roles.Size(), func(rt spmd.Runtime) error {
		w, err := spmd.NewWorld(rt, roles)
		if err != nil {
			return err
		}
		return verbstest.RunRank(w, func(w *spmd.World, cfg verbs.Config) (verbs.Network, error) {
			n, err := fabric.Open(w, cfg)
			if err == nil && !verbs.AtomicsOnTargetCPU(n) {
				err = errors.New("shm says its remote atomics are not executed by the MN's CPU")
			}
			return n, err
		}, verbs.Config{Provider: "shm"})
	})
	if err != nil {
		t.Fatalf("%+v", err)
	}
}
