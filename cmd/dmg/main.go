// Command dmg is the DMG graph processing system: one binary, launched by
// mpirun or srun (or run with --local), whose ranks split into compute
// nodes and memory nodes. See `dmg --help` and the README.
package main

import (
	"os"

	"github.com/dmg-hpc/dmg/launch"
)

func main() {
	os.Exit(launch.Main(os.Args[1:], os.Stdout, os.Stderr))
}
