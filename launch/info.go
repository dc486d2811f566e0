package launch

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

type rankInfo struct {
	Rank  int    `json:"rank"`
	Role  string `json:"role"`
	Index int    `json:"index"`
	Host  string `json:"host"`
	PID   int    `json:"pid"`
	Cores int    `json:"cores"`
	// Machine names the kernel and cores the rank runs on (machineOf):
	// ranks of one machine share its cores and memory.
	Machine string `json:"machine"`
}

type infoReport struct {
	Library string     `json:"mpi_library"`
	CN      int        `json:"cn"`
	MN      int        `json:"mn"`
	Ranks   []rankInfo `json:"ranks"`
}

func infoCmd(opts *Options, run func(body) int) *cobra.Command {
	return &cobra.Command{
		Use:   "info",
		Short: "print the role map of the job (rank, role, host, pid) and the MPI library",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return codeErr(run(func(j *Job) error { return info(j) }))
		},
	}
}

func info(j *Job) error {
	rep := infoReport{Library: j.Library(), CN: j.Roles.CN, MN: j.Roles.MN, Ranks: j.ranks}
	if !j.IsRoot() {
		return nil
	}
	fmt.Fprintf(j.Out, "DMG job: %d ranks, %d compute nodes + %d memory nodes\n", len(rep.Ranks), rep.CN, rep.MN)
	fmt.Fprintf(j.Out, "MPI: %s\n\n", rep.Library)
	tw := tabwriter.NewWriter(j.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RANK\tROLE\tHOST\tPID\tCORES")
	for _, r := range rep.Ranks {
		fmt.Fprintf(tw, "%d\t%s%d\t%s\t%d\t%d\n", r.Rank, r.Role, r.Index, r.Host, r.PID, r.Cores)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return writeJSON(j, rep)
}
