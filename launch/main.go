package launch

import (
	"fmt"
	"io"
	"strings"

	"github.com/dmg-hpc/dmg/spmd"
	"github.com/pkg/errors"
	"github.com/spf13/cobra"
)

// exitErr carries a job's exit code out of a cobra command; the job has
// already printed whatever it had to say.
type exitErr struct{ code int }

func (e exitErr) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func codeErr(code int) error {
	if code == ExitOK {
		return nil
	}
	return exitErr{code}
}

// Main runs the dmg command line with args (without the program name) and
// returns the process exit status. Only rank 0 writes to stdout; at most
// one error line goes to stderr.
func Main(args []string, stdout, stderr io.Writer) int {
	launched, rank, _ := spmd.Launched()
	opts := &Options{command: commandLine(args)}
	run := func(fn body) int { return runJob(opts, stdout, stderr, fn) }

	root := &cobra.Command{
		Use:   "dmg",
		Short: "DMG: graph processing on disaggregated memory",
		Long: `DMG runs graph algorithms on compute nodes (CNs) over a graph that lives in
the memory of memory nodes (MNs), reached through one-sided RDMA verbs.

Launch one process per rank with mpirun or srun, e.g.
  mpirun -np 4 dmg --roles cn:2,mn:2 info
or run every rank in this process with --local.`,
		Version:           version(),
		SilenceErrors:     true,
		SilenceUsage:      true,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	opts.register(root.PersistentFlags())
	root.AddCommand(infoCmd(opts, run), runCmd(opts, run), loadCmd(opts, run), benchCmd(opts, run), convertCmd(opts, stderr),
		serveCmd(opts, run), lsCmd(stdout), stopCmd(stdout))

	if rank != 0 { // help and usage come from rank 0 only
		root.SetOut(io.Discard)
	} else {
		root.SetOut(stdout)
	}
	root.SetErr(io.Discard)
	root.SetArgs(args)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return BadInputf("%v (see `%s --help`)", err, c.CommandPath())
	})
	err := root.Execute()
	var ee exitErr
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ee):
		return ee.code
	default:
		// Argument errors are found identically on every rank, before any
		// job starts: print them once.
		if rank == 0 {
			msg := err.Error()
			if strings.HasPrefix(msg, "unknown command") {
				msg += " (see `dmg --help`)"
			}
			fmt.Fprintf(stderr, "dmg: %s\n", msg)
		}
		if launched {
			return exitBeforeMPI(rank, ExitBadInput)
		}
		return ExitBadInput
	}
}
