package launch

import (
	"encoding/json"
	"github.com/dmg-hpc/dmg/algo"
	"os"
	"path/filepath"

	"github.com/pkg/errors"
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
// directory and a rename.
func WriteFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, algo.TempPattern(filepath.Base(path)))
	if err != nil {
		return BadInput(errors.Wrapf(err, "launch: cannot write %s", path))
	}
	tmp := f.Name()
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return errors.Wrapf(err, "launch: writing %s", path)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return errors.Wrapf(err, "launch: writing %s", path)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return errors.Wrapf(err, "launch: renaming into %s", path)
	}
	return nil
}
