//go:build nompi

package spmd

import "github.com/pkg/errors"

// StartMPI is unavailable in a build without MPI (-tags nompi); such a
// binary runs with --local only.
func StartMPI() (Runtime, error) {
	return nil, errors.New("spmd: this dmg was built without MPI (-tags nompi); run with --local or rebuild with Open MPI")
}
