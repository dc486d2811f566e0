package launch

import (
	"encoding/json"
	"io"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/outfile"
)

// writeJSON writes v as the --json report (rank 0 only) through outfile:
// an existing report is never left half-written, and "-" is the job's
// JSON stream (rank 0's stdout).
func writeJSON(j *Job, v any) error {
	if j.Opts.JSON == "" || !j.IsRoot() {
		return nil
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return errors.Wrap(err, "launch: encoding JSON report")
	}
	return writeOutput(outfile.Options{Stdout: j.json}, j.Opts.JSON, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// writeOutput writes a user-named output with o (outfile); a path that
// cannot be written is bad input.
func writeOutput(o outfile.Options, path string, write func(io.Writer) error) error {
	err := o.Write(path, write)
	var oe *outfile.Error
	if errors.As(err, &oe) {
		return BadInput(err)
	}
	return err
}
