package launch

import (
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/dmg-hpc/dmg/sizes"
	"github.com/dmg-hpc/dmg/spmd"
)

// Options are the flags every job shares. Commands add their own.
type Options struct {
	Roles   string // --roles cn:C,mn:M
	Local   bool   // --local: every rank a goroutine in this process
	Verbose int    // -v: progress on stderr from rank 0; -vv: from every rank
	JSON    string // --json FILE: the machine-readable report
	// CPUProfile is --cpuprofile PREFIX: each rank writes a Go CPU profile
	// of its whole run to PREFIX.rankN.pprof (go tool pprof reads it).
	CPUProfile string
	// MNNice is --mn-nice: the nice value of memory-node processes (0
	// leaves it alone). See renice.
	MNNice int
	// StartTimeout is --start-timeout: how long MPI_Init and a first
	// barrier may take before this rank gives up (a rank that died while
	// starting leaves the others waiting for good under a launcher that
	// does not end them); 0 waits for ever.
	StartTimeout time.Duration
	// command is the command line, for the report.
	command string
	// allCN makes every rank a compute node (`dmg convert` under a
	// launcher: every rank parses; there are no memory nodes).
	allCN bool
	// stdoutData is set when a command writes its data to standard
	// output (--out -): the text report then goes to stderr, as with
	// --json -.
	stdoutData bool
	// need is which roles the command's job holds (spmd.Both unless it
	// serves a pool or attaches to one).
	need spmd.Need
	// flags are the shared flags, to tell one given empty from one left
	// out.
	flags *pflag.FlagSet
}

func (o *Options) register(fs *pflag.FlagSet) {
	o.flags = fs
	fs.StringVar(&o.Roles, "roles", "", "role layout cn:C,mn:M; ranks 0..C-1 are compute nodes, the rest memory nodes (default: half and half, cn:2,mn:2 with --local)")
	fs.BoolVar(&o.Local, "local", false, "run every rank as a goroutine in this process (in-process fabric) instead of under mpirun/srun")
	fs.CountVarP(&o.Verbose, "verbose", "v", "log progress on stderr: -v from rank 0 (each iteration once), -vv from every rank")
	fs.StringVar(&o.JSON, "json", "", "also write the report as JSON to `FILE` (-: the JSON alone on stdout, the text report on stderr)")
	fs.StringVar(&o.CPUProfile, "cpuprofile", "", "each rank writes a CPU profile of its run to `PREFIX`.rankN.pprof (for go tool pprof)")
	fs.DurationVar(&o.StartTimeout, "start-timeout", 2*time.Minute, "a rank where MPI has not started after this long (MPI_Init and a first barrier: another rank died or stopped while starting, and the launcher did not end the job) exits with an error; 0 waits for ever")
	fs.IntVar(&o.MNNice, "mn-nice", defaultMNNice, "memory-node processes run at nice `N` (0-19; 0 leaves them alone): where they share cores with compute nodes, their fabric progress and waits yield the cores to the computing ranks")
}

// roles resolves --roles for a world of the given size (0: unknown yet),
// and checks --mn-nice: both are job-wide flags found bad before MPI starts.
func (o *Options) roles(size int) (spmd.Roles, error) {
	if o.MNNice < 0 || o.MNNice > 19 {
		return spmd.Roles{}, BadInputf("--mn-nice %d; expected a nice value from 0 to 19 (0 leaves the memory nodes' priority alone)", o.MNNice)
	}
	if o.StartTimeout < 0 || (o.StartTimeout > 0 && o.StartTimeout < time.Second) {
		return spmd.Roles{}, BadInputf("--start-timeout %v; expected at least 1s, or 0 to wait for ever", o.StartTimeout)
	}
	if o.flags != nil && o.flags.Changed("roles") && strings.TrimSpace(o.Roles) == "" {
		return spmd.Roles{}, BadInputf("spmd: --roles is empty; expected cn:C,mn:M (or leave it out for the default layout)")
	}
	if o.allCN && size > 0 {
		return spmd.Roles{CN: size}, nil
	}
	if o.Roles == "" && size > 0 {
		switch o.need {
		case spmd.MNOnly:
			return spmd.Roles{MN: size}, nil
		case spmd.CNOnly:
			return spmd.Roles{CN: size}, nil
		}
	}
	if o.Roles == "" {
		switch {
		case o.Local:
			return spmd.Roles{CN: 2, MN: 2}, nil
		case size == 0:
			return spmd.Roles{}, nil
		case size < 2:
			return spmd.Roles{}, BadInputf("spmd: a job of %d rank cannot hold both a compute node and a memory node; launch at least 2 ranks or pass --roles", size)
		default:
			return spmd.Roles{CN: size - size/2, MN: size / 2}, nil
		}
	}
	r, err := spmd.ParseRolesFor(o.Roles, o.need)
	if err != nil {
		return r, BadInput(err)
	}
	if o.Local {
		// Every rank a goroutine of this process: bounded, and held by
		// this machine.
		if err := sizes.This().Ranks(r.CN, r.MN); err != nil {
			return r, BadInput(err)
		}
	}
	if size > 0 {
		if err := r.Check(size); err != nil {
			return r, BadInput(err)
		}
	}
	return r, nil
}
