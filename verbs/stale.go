package verbs

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pkg/errors"
)

// ShmDir is where the shm provider keeps its endpoint regions and the cxl
// backend its pools by default.
const ShmDir = "/dev/shm"

// RuntimeMarker begins the name of every file DMG creates for the
// duration of a process (the fabric backend's shm regions, see dmgfab.c;
// the cxl backend's pools): RuntimeMarker + "PID-START-REST", START being
// the process's start time (/proc/PID/stat, clock ticks since boot), so
// that neither a user's file nor a later process with the same pid can be
// taken for a dead process's.
const RuntimeMarker = "dmgjob-"

// RuntimeName is the name of a file this process creates for its own
// lifetime: RuntimeMarker, its pid and start time, then rest (not empty;
// letters, digits, '.', '_', '-').
func RuntimeName(rest string) (string, error) {
	pid := os.Getpid()
	start, err := ProcStart(pid)
	if err != nil {
		return "", err
	}
	return formatRuntimeName(pid, start, rest), nil
}

func formatRuntimeName(pid int, start uint64, rest string) string {
	return fmt.Sprintf("%s%d-%d-%s", RuntimeMarker, pid, start, rest)
}

// ParseRuntimeName splits a name made by RuntimeName; ok is false for
// any other name. Numbers are canonical (no sign, no leading zero), so
// one process's names format back to themselves.
func ParseRuntimeName(name string) (pid int, start uint64, rest string, ok bool) {
	s, found := strings.CutPrefix(name, RuntimeMarker)
	if !found {
		return 0, 0, "", false
	}
	pidText, s, found := strings.Cut(s, "-")
	if !found {
		return 0, 0, "", false
	}
	startText, rest, found := strings.Cut(s, "-")
	if !found || rest == "" || !canonical(pidText) || !canonical(startText) {
		return 0, 0, "", false
	}
	for _, c := range rest {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return 0, 0, "", false
		}
	}
	p, err := strconv.ParseInt(pidText, 10, 32)
	if err != nil || p <= 0 {
		return 0, 0, "", false
	}
	st, err := strconv.ParseUint(startText, 10, 64)
	if err != nil {
		return 0, 0, "", false
	}
	return int(p), st, rest, true
}

// canonical: decimal digits, no leading zero (but "0").
func canonical(s string) bool {
	if s == "" || len(s) > 1 && s[0] == '0' {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// ProcStat is what DMG reads of a process in /proc/PID/stat.
type ProcStat struct {
	State byte   // field 3: R, S, D, T, t, Z (zombie), X (dead), ...
	Start uint64 // field 22: start time, in clock ticks since boot
}

// Exited tells whether the process has exited: a zombie its parent has
// not reaped (a reaper may take its time: a container's PID 1 may never)
// runs no more and holds nothing.
func (s ProcStat) Exited() bool { return s.State == 'Z' || s.State == 'X' }

// ReadProcStat reads process pid's /proc/PID/stat. An error wrapping
// os.ErrNotExist means there is no such process.
func ReadProcStat(pid int) (ProcStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ProcStat{}, errors.Wrapf(err, "verbs: /proc stat of pid %d", pid)
	}
	return parseProcStat(string(b))
}

// ProcStart is the start time of process pid: field 22 of /proc/PID/stat,
// in clock ticks since boot. An error wrapping os.ErrNotExist means there
// is no such process.
func ProcStart(pid int) (uint64, error) {
	st, err := ReadProcStat(pid)
	return st.Start, err
}

// parseProcStat reads the state and start time from a /proc/PID/stat
// line: the command (field 2) is in parentheses and may hold spaces and
// ')', so the fields are counted after its last ')'.
func parseProcStat(line string) (ProcStat, error) {
	i := strings.LastIndexByte(line, ')')
	if i < 0 {
		return ProcStat{}, errors.Errorf("verbs: /proc stat line without a command: %.40q", line)
	}
	f := strings.Fields(line[i+1:])
	const startField = 22 - 3 // fields after the command begin at field 3
	if len(f) <= startField || len(f[0]) != 1 {
		return ProcStat{}, errors.Errorf("verbs: /proc stat line of %d fields after the command; expected a state and at least %d", len(f), startField+1)
	}
	v, err := strconv.ParseUint(f[startField], 10, 64)
	if err != nil {
		return ProcStat{}, errors.Errorf("verbs: /proc stat start time %q is not a number", f[startField])
	}
	return ProcStat{State: f[0][0], Start: v}, nil
}

// alive reports whether process pid, started at start, still runs (a
// zombie does not). When that cannot be told (/proc unreadable), it is
// taken as alive.
func alive(pid int, start uint64) bool {
	have, err := ReadProcStat(pid)
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	return err != nil || have.Start == start && !have.Exited()
}

// Dead reports whether name is a runtime name (RuntimeName) of a process
// that no longer runs; any other name is not dead.
func Dead(name string) bool {
	pid, start, _, ok := ParseRuntimeName(name)
	return ok && !alive(pid, start)
}

// RemoveStale deletes the files that dead DMG processes left in dir (a
// rank that is killed cannot remove them): exactly those whose name
// ParseRuntimeName accepts and whose (pid, start time) is no running
// process. Any other file — a user's "dmg-2024-results.csv" — is never
// touched; errors are ignored (a file in use by a live process is not
// stale). It returns how many it removed.
func RemoveStale(dir string) int {
	names, _ := filepath.Glob(filepath.Join(dir, RuntimeMarker+"*"))
	removed := 0
	for _, p := range names {
		if !Dead(filepath.Base(p)) {
			continue
		}
		if st, err := os.Lstat(p); err != nil || !st.Mode().IsRegular() {
			continue // DMG creates regular files only
		}
		if os.Remove(p) == nil {
			removed++
		}
	}
	return removed
}

// Mapped is a runtime file (RuntimeName) that a process has mapped, as
// one line of its /proc/PID/maps names it.
type Mapped struct {
	Name    string // the file's base name
	PID     int    // the process that created it
	Rest    string // what follows its pid and start time
	Deleted bool   // unlinked since it was mapped
}

// MappedRuntime lists the runtime files in ShmDir among maps (the text of
// a /proc/PID/maps), once per mapping line.
func MappedRuntime(maps []byte) []Mapped {
	var out []Mapped
	for _, line := range strings.Split(string(maps), "\n") {
		i := strings.Index(line, ShmDir+"/"+RuntimeMarker)
		if i < 0 {
			continue
		}
		path, deleted := strings.CutSuffix(line[i:], " (deleted)")
		name := filepath.Base(path)
		if pid, _, rest, ok := ParseRuntimeName(name); ok {
			out = append(out, Mapped{Name: name, PID: pid, Rest: rest, Deleted: deleted})
		}
	}
	return out
}
