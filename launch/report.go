package launch

import (
	"encoding/json"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/algo"
)

// writeJSON writes v as the --json report (rank 0 only), through a
// temporary file renamed into place so an existing report is never left
// half-written.
func writeJSON(j *Job, v any) error {
	if j.Opts.JSON == "" || !j.IsRoot() {
		return nil
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return errors.Wrap(err, "launch: encoding JSON report")
	}
	b = append(b, '\n')
	if j.Opts.JSON == "-" {
		_, err := j.json.Write(b)
		return err
	}
	return WriteFileAtomic(j.Opts.JSON, b)
}

// WriteFileAtomic writes data to path via a temporary file in the same
// directory and a rename (algo.WriteFileAtomic); a path that cannot be
// written is bad input.
func WriteFileAtomic(path string, data []byte) error {
	err := algo.WriteFileAtomic(path, data)
	var oe *algo.OutputError
	if errors.As(err, &oe) {
		return BadInput(err)
	}
	return err
}
