package spmd

import (
	"bytes"
	"fmt"

	"github.com/pkg/errors"
)

// exerciseComm runs every collective of a world with the given roles and
// checks the results; it is run in-process and under mpirun.
func exerciseComm(rt Runtime, roles Roles) error {
	w, err := NewWorld(rt, roles)
	if err != nil {
		return err
	}
	c := w.Comm
	n, r := c.Size(), c.Rank()
	if err := c.Barrier(); err != nil {
		return err
	}
	// Blobs of different lengths, including empty.
	blob := bytes.Repeat([]byte{byte(r + 1)}, r*3)
	all, err := c.AllGather(blob)
	if err != nil {
		return err
	}
	if len(all) != n {
		return errors.Errorf("allgather: %d blobs, want %d", len(all), n)
	}
	for i, b := range all {
		if want := bytes.Repeat([]byte{byte(i + 1)}, i*3); !bytes.Equal(b, want) {
			return errors.Errorf("allgather: rank %d's blob is %v, want %v", i, b, want)
		}
	}
	root := n - 1
	got, err := c.Bcast(root, []byte(fmt.Sprintf("from %d", r)))
	if err != nil {
		return err
	}
	if string(got) != fmt.Sprintf("from %d", root) {
		return errors.Errorf("bcast: got %q", got)
	}
	iv := []int64{int64(r), int64(-r), 1}
	if err := c.AllReduceInt64(iv, Sum); err != nil {
		return err
	}
	if want := int64(n * (n - 1) / 2); iv[0] != want || iv[1] != -want || iv[2] != int64(n) {
		return errors.Errorf("allreduce sum: %v", iv)
	}
	mn := []int64{int64(r + 10)}
	if err := c.AllReduceInt64(mn, Min); err != nil {
		return err
	}
	mx := []float64{float64(r) / 2}
	if err := c.AllReduceFloat64(mx, Max); err != nil {
		return err
	}
	if mn[0] != 10 || mx[0] != float64(n-1)/2 {
		return errors.Errorf("allreduce min/max: %v %v", mn, mx)
	}
	// Role communicators: sizes, ranks and a reduction inside each.
	wantSize := roles.CN
	if w.Role == MN {
		wantSize = roles.MN
	}
	if w.Group.Size() != wantSize || w.Group.Rank() != w.Index {
		return errors.Errorf("role group: rank %d of %d, want %d of %d", w.Group.Rank(), w.Group.Size(), w.Index, wantSize)
	}
	gv := []int64{int64(r)}
	if err := w.Group.AllReduceInt64(gv, Sum); err != nil {
		return err
	}
	var want int64
	for i := 0; i < wantSize; i++ {
		want += int64(roles.RankOf(w.Role, i))
	}
	if gv[0] != want {
		return errors.Errorf("role group allreduce on %s: %d, want %d", w.Role, gv[0], want)
	}
	gb, err := w.Group.AllGather([]byte{byte(w.Index)})
	if err != nil {
		return err
	}
	for i, b := range gb {
		if len(b) != 1 || int(b[0]) != i {
			return errors.Errorf("role group allgather: %v", gb)
		}
	}
	return c.Barrier()
}
