package cxl_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/spmd/mpitest"
	"github.com/dmg-hpc/dmg/verbs"
	"github.com/dmg-hpc/dmg/verbs/cxl"
	"github.com/dmg-hpc/dmg/verbs/verbstest"
)

func TestMain(m *testing.M) {
	mpitest.Main(m, map[string]func() error{
		"suite":   childSuite,
		"visible": childVisible,
	})
}

// opener maps the pools from dir (or devs).
func opener(dir string, devs ...string) verbstest.Opener {
	return func(w *spmd.World, cfg verbs.Config) (verbs.Network, error) {
		cfg.PoolDir, cfg.PoolDevices = dir, devs
		return cxl.Open(w, cfg)
	}
}

// The conformance suite in one process: every rank a goroutine, each with
// its own mappings of the same files.
func TestConformance(t *testing.T) {
	dir := t.TempDir()
	verbstest.Run(t, opener(dir), spmd.Roles{CN: 1, MN: 1}, spmd.Roles{CN: 3, MN: 2})
	assertEmpty(t, dir)
}

// assertEmpty: every pool file was removed at Close.
func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	left, _ := filepath.Glob(filepath.Join(dir, verbs.RuntimeMarker+"*"))
	if len(left) > 0 {
		t.Errorf("pool files left after Close: %v", left)
	}
}

// runLocal runs fn on every rank of an in-process job of roles.
func runLocal(roles spmd.Roles, fn func(w *spmd.World) error) error {
	return spmd.RunLocal(roles.Size(), func(rt spmd.Runtime) error {
		w, err := spmd.NewWorld(rt, roles)
		if err != nil {
			return err
		}
		return fn(w)
	})
}

// Devices (here: existing files) are mapped, used and left in place.
func TestDevices(t *testing.T) {
	dir := t.TempDir()
	devs := []string{filepath.Join(dir, "dax0.0"), filepath.Join(dir, "dax1.0")}
	for _, d := range devs {
		if err := os.WriteFile(d, make([]byte, 4<<20), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	roles := spmd.Roles{CN: 2, MN: 2}
	err := runLocal(roles, func(w *spmd.World) error {
		return verbstest.RunRank(w, opener("", devs...), verbs.Config{})
	})
	if err != nil {
		t.Fatalf("%+v", err)
	}
	for _, d := range devs {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("device %s removed: %v", d, err)
		}
	}
}

// Bad places fail on every rank with one clear error, before anything is
// written: a pool larger than the directory's free space, a device too
// small for the pool, a device list of the wrong length, a missing
// directory.
func TestBadPlaces(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		dir   string
		devs  []string
		pool  uint64
		want  string
		empty bool
	}{
		{"too big for the directory", dir, nil, 1 << 47, "available", true},
		{"device too small", "", []string{small}, 1 << 20, "holds 4.0 KiB", false},
		{"one device for two MNs", "", []string{small, small, small}, 4096, "one per MN", false},
		{"no such directory", filepath.Join(dir, "nope"), nil, 4096, "nope", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			mns := max(1, min(len(c.devs), 2))
			roles := spmd.Roles{CN: 1, MN: mns}
			if len(c.devs) == 3 {
				roles.MN = 2
			}
			errs := make([]error, roles.Size())
			_ = runLocal(roles, func(w *spmd.World) error {
				net, err := cxl.Open(w, verbs.Config{PoolBytes: c.pool, PoolDir: c.dir, PoolDevices: c.devs})
				if err == nil {
					err = errors.New("opened")
					_ = net.Close()
				}
				errs[w.Rank()] = err
				return nil
			})
			for r, err := range errs {
				if !strings.Contains(err.Error(), c.want) {
					t.Errorf("rank %d: %v; want an error mentioning %q", r, err, c.want)
				}
				var in interface{ BadInput() bool }
				if !errors.As(err, &in) || !in.BadInput() {
					t.Errorf("rank %d: %v is not marked as bad input", r, err)
				}
			}
			if c.empty {
				assertEmpty(t, dir)
			}
		})
	}
}

// A dead job's pool file is removed when a network opens; a live
// process's and others' files are not.
func TestRemovesStalePools(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no `true` to make a dead pid:", err)
	}
	dir := t.TempDir()
	mine, err := verbs.RuntimeName("cxl-mn0-0123456789ab")
	if err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, fmt.Sprintf("%s%d-5-cxl-mn0-0123456789ab", verbs.RuntimeMarker, cmd.Process.Pid))
	live := filepath.Join(dir, mine)
	other := filepath.Join(dir, "someone-else")
	lookalike := filepath.Join(dir, fmt.Sprintf("dmg-%d-results.csv", cmd.Process.Pid))
	for _, p := range []string{stale, live, other, lookalike} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	err = runLocal(spmd.Roles{CN: 1, MN: 1}, func(w *spmd.World) error {
		net, err := cxl.Open(w, verbs.Config{PoolBytes: 4096, PoolDir: dir})
		if err != nil {
			return err
		}
		return net.Close()
	})
	if err != nil {
		t.Fatalf("%+v", err)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Errorf("stale pool %s not removed", stale)
	}
	for _, p := range []string{live, other, lookalike} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
}

// Under mpirun, ranks are processes that share only the mapped files.
func TestMPISuite(t *testing.T) {
	dir := t.TempDir()
	mpitest.Run(t, 4, "suite", "DMG_TEST_ROLES=cn:2,mn:2", "DMG_CXL_DIR="+dir)
	assertEmpty(t, dir)
}

// A WRITE whose Flush returned is visible to a later READ by any process.
func TestMPIVisibility(t *testing.T) {
	mpitest.Run(t, 3, "visible", "DMG_TEST_ROLES=cn:2,mn:1", "DMG_CXL_DIR="+t.TempDir())
}

func childSuite() error {
	w, err := mpitest.World()
	if err != nil {
		return err
	}
	return mpitest.Finish(w, verbstest.RunRank(w, opener(os.Getenv("DMG_CXL_DIR")), verbs.Config{}))
}

func childVisible() error {
	w, err := mpitest.World()
	if err != nil {
		return err
	}
	return mpitest.Finish(w, visible(w))
}

// visible: in rounds, one CN writes a pattern and flushes, everyone
// passes a barrier, and the other CN and the MN (through its own mapping)
// read it back. The rounds alternate writers and patterns, so a stale read
// of the previous round fails.
func visible(w *spmd.World) error {
	const size, rounds = 64 << 10, 64
	net, err := cxl.Open(w, verbs.Config{PoolBytes: size, PoolDir: os.Getenv("DMG_CXL_DIR")})
	if err != nil {
		return err
	}
	var ep verbs.Endpoint
	if w.Role == spmd.CN {
		if ep, err = net.NewEndpoint(); err != nil {
			return err
		}
	}
	base, _ := verbs.MakeAddr(0, 0)
	got := make([]byte, size)
	for r := range rounds {
		want := bytes.Repeat([]byte{byte(r*7 + 1), byte(r)}, size/2)
		writer := r % w.Roles.CN
		if w.Role == spmd.CN && w.Index == writer {
			if err := ep.Write(base, want); err != nil {
				return err
			}
			if err := ep.Flush(); err != nil {
				return err
			}
		}
		if err := w.Comm.Barrier(); err != nil {
			return err
		}
		switch {
		case w.Role == spmd.MN:
			copy(got, net.Pool())
		case w.Index != writer:
			if err := ep.Read(got, base); err != nil {
				return err
			}
			if err := ep.Flush(); err != nil {
				return err
			}
		default:
			copy(got, want)
		}
		if !bytes.Equal(got, want) {
			return errors.Errorf("round %d: rank %d reads %x... after the writer's Flush and a barrier; want %x...", r, w.Rank(), got[:4], want[:4])
		}
		if err := w.Comm.Barrier(); err != nil {
			return err
		}
	}
	if ep != nil {
		if err := ep.Close(); err != nil {
			return err
		}
	}
	return net.Close()
}
