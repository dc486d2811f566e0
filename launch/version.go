package launch

import (
	"runtime/debug"
	"strings"
)

// Version is dmg's version, set at link time by the Makefile
// (-ldflags "-X github.com/dmg-hpc/dmg/launch.Version=$(git describe)");
// without it, the commit Go recorded in the binary, or "devel".
var Version = ""

// version is Version, else the VCS revision of the build (with "-dirty"
// when the tree had changes), else "devel".
func version() string {
	if Version != "" {
		return Version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if rev == "" {
		return "devel"
	}
	return "devel-" + rev[:min(12, len(rev))] + dirty
}

// commandLine is how this rank was started, for the report.
func commandLine(args []string) string {
	return strings.Join(append([]string{"dmg"}, args...), " ")
}
