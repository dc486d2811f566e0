package cxl

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dustin/go-humanize"
	"github.com/pkg/errors"
	"golang.org/x/sys/unix"

	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/verbs"
	"github.com/dmg-hpc/dmg/verbs/memfab"
)

// Open opens the cxl network collectively over w (every rank calls it).
func Open(w *spmd.World, cfg verbs.Config) (*memfab.Network, error) {
	if w == nil {
		return nil, errors.New("verbs: cxl.Open needs a world")
	}
	m := &memory{dir: cfg.PoolDir, devs: cfg.PoolDevices}
	if m.dir == "" {
		m.dir = verbs.ShmDir
	}
	if len(m.devs) > 0 && len(m.devs) != w.Roles.MN {
		return nil, badInputf("verbs: %d pool devices (%s) for %d MNs; expected one per MN", len(m.devs), strings.Join(m.devs, ","), w.Roles.MN)
	}
	return memfab.OpenMemory(m, w, cfg)
}

// memory is one rank's mapped pools.
type memory struct {
	dir     string
	devs    []string
	maps    [][]byte // every mapping this rank made
	created string   // the file this MN created, removed at Release
}

func (m *memory) Provider() string { return "cxl" }

// GapBytes: an operation costs the same bookkeeping as memfab's, and a
// miss on CXL memory costs a few hundred nanoseconds, about a copy of
// 4 KiB.
func (m *memory) GapBytes() int { return 4 << 10 }

func (m *memory) Create(mn int, size uint64) (*memfab.Pool, []byte, error) {
	if len(m.devs) > 0 {
		path := m.devs[mn]
		p, err := m.attach(path, size, true)
		return p, []byte(path), err
	}
	verbs.RemoveStale(m.dir)
	var st unix.Statfs_t
	if err := unix.Statfs(m.dir, &st); err != nil {
		return nil, nil, badInputf("verbs: cxl pool directory %s: %v", m.dir, err)
	}
	if free := st.Bavail * uint64(st.Bsize); free < size {
		return nil, nil, badInputf("verbs: the pool of MN %d needs %s (%d bytes) in %s, which has %s available; free space there or give another --cxl-dir",
			mn, humanize.IBytes(size), size, m.dir, humanize.IBytes(free))
	}
	var r [6]byte
	if _, err := rand.Read(r[:]); err != nil {
		return nil, nil, errors.Wrap(err, "verbs: naming a cxl pool")
	}
	name, err := verbs.RuntimeName(fmt.Sprintf("cxl-mn%d-%s", mn, hex.EncodeToString(r[:])))
	if err != nil {
		return nil, nil, errors.Wrap(err, "verbs: naming a cxl pool")
	}
	path := filepath.Join(m.dir, name)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, nil, badInputf("verbs: creating the cxl pool %s: %v", path, err)
	}
	m.created = path
	err = unix.Fallocate(int(f.Fd()), 0, 0, int64(max(size, 1)))
	f.Close()
	if err != nil {
		return nil, nil, badInputf("verbs: reserving %s (%d bytes) for the cxl pool %s: %v", humanize.IBytes(size), size, path, err)
	}
	p, err := m.attach(path, size, false)
	return p, []byte(path), err
}

func (m *memory) Attach(mn int, name []byte, size uint64) (*memfab.Pool, error) {
	return m.attach(string(name), size, false)
}

// attach maps size bytes of the file or device at path shared.
func (m *memory) attach(path string, size uint64, device bool) (*memfab.Pool, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, badInputf("verbs: opening the cxl pool %s: %v", path, err)
	}
	defer f.Close()
	have, err := fileSize(f)
	if err != nil {
		return nil, errors.Wrapf(err, "verbs: the size of the cxl pool %s", path)
	}
	if have < size {
		return nil, badInputf("verbs: the cxl pool %s holds %s (%d bytes); the pool needs %s (%d bytes)", path, humanize.IBytes(have), have, humanize.IBytes(size), size)
	}
	if size == 0 {
		return memfab.NewPool(nil)
	}
	n := roundUp(size, uint64(os.Getpagesize()))
	if device {
		// A DAX device maps in units of its alignment, 2 MiB by default.
		n = min(roundUp(size, 2<<20), have)
	}
	// MAP_POPULATE maps every page now (the file's pages are reserved
	// already), as registering memory with an RDMA NIC pins it: a first
	// touch per page during the compute phase cost kron:20 SSSP a quarter
	// of its time.
	b, err := unix.Mmap(int(f.Fd()), 0, int(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return nil, errors.Wrapf(err, "verbs: mapping %s of the cxl pool %s", humanize.IBytes(n), path)
	}
	m.maps = append(m.maps, b)
	return memfab.NewPool(b[:size])
}

func (m *memory) Release() error {
	var first error
	for _, b := range m.maps {
		if err := unix.Munmap(b); err != nil && first == nil {
			first = errors.Wrap(err, "verbs: unmapping a cxl pool")
		}
	}
	m.maps = nil
	if m.created != "" {
		if err := os.Remove(m.created); err != nil && first == nil {
			first = errors.Wrap(err, "verbs: removing the cxl pool")
		}
		m.created = ""
	}
	return first
}

// fileSize is a regular file's length, or a DAX device's size from sysfs.
func fileSize(f *os.File) (uint64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if st.Mode()&os.ModeCharDevice == 0 {
		return uint64(st.Size()), nil
	}
	var s unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &s); err != nil {
		return 0, err
	}
	p := fmt.Sprintf("/sys/dev/char/%d:%d/size", unix.Major(s.Rdev), unix.Minor(s.Rdev))
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, errors.Wrapf(err, "a character device without %s is not a DAX device", p)
	}
	var n uint64
	if _, err := fmt.Sscan(strings.TrimSpace(string(b)), &n); err != nil {
		return 0, errors.Wrapf(err, "parsing %s", p)
	}
	return n, nil
}

func roundUp(n, to uint64) uint64 { return (n + to - 1) / to * to }

// badInputf is a pool that cannot be placed as the user asked (a
// directory, a device or a size): memfab's PoolError, marked bad input.
func badInputf(format string, args ...any) error {
	return &memfab.PoolError{Msg: fmt.Sprintf(format, args...), Bad: true}
}
