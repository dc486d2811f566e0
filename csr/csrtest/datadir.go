// Package csrtest holds test helpers shared by the packages that test
// against graph data: where the validation data lives, and small fixtures.
package csrtest

import (
	"os"
	"path/filepath"
	"testing"
)

// EnvDataDir names the environment variable that points at the validation
// data (the directory holding graphalytics/ and snap/).
const EnvDataDir = "DMG_VALIDATION_DATA"

// DataDir returns the validation data directory: $DMG_VALIDATION_DATA, or
// ../shared/data relative to the repository root (the directory holding
// go.mod, searched upwards from the working directory). If the variable is
// unset and the default directory is missing, the test is skipped; if the
// variable is set and the directory is missing, the test fails.
func DataDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv(EnvDataDir); d != "" {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			t.Fatalf("%s=%s: not a directory", EnvDataDir, d)
		}
		return d
	}
	root, err := repoRoot()
	if err != nil {
		t.Skipf("validation data: %v (set %s)", err, EnvDataDir)
	}
	d := filepath.Join(root, "..", "shared", "data")
	if st, err := os.Stat(d); err != nil || !st.IsDir() {
		t.Skipf("validation data not found at %s (set %s to its location)", d, EnvDataDir)
	}
	return d
}

// GraphalyticsDir returns DataDir/graphalytics/<name> (the dataset's
// directory; its files are <name>.properties, <name>.v, <name>.e and the
// reference outputs <name>-BFS etc.).
func GraphalyticsDir(t testing.TB, name string) string {
	t.Helper()
	return filepath.Join(DataDir(t), "graphalytics", name)
}

// GraphalyticsDatasets lists the dataset names under DataDir/graphalytics.
func GraphalyticsDatasets(t testing.TB) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(DataDir(t), "graphalytics"))
	if err != nil {
		t.Fatalf("listing graphalytics datasets: %v", err)
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

func repoRoot() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		p := filepath.Dir(d)
		if p == d {
			return "", os.ErrNotExist
		}
		d = p
	}
}
