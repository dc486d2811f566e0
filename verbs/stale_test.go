package verbs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Only DMG's runtime files of dead processes are removed: a user's files
// named like them, and a live process's, stay.
func TestRemoveStale(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no `true` to make a dead pid:", err)
	}
	dead := cmd.Process.Pid
	me := os.Getpid()
	myStart, err := ProcStart(me)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		keep bool
	}{
		{formatRuntimeName(dead, 12345, "cxl-mn0-0123456789ab"), false}, // a dead job's pool
		{formatRuntimeName(dead, 12345, "ep0"), false},                  // a dead job's shm region
		{formatRuntimeName(me, myStart+1, "ep3"), false},                // this pid, reused: the old process is dead
		{formatRuntimeName(me, myStart, "cxl-mn1-0123456789ab"), true},  // this live process's
		{"dmg-2024-results.csv", true},                                  // a user's look-alike, the issue's
		{fmt.Sprintf("dmg-%d-18ec-0", dead), true},                      // the old, unmarked form
		{fmt.Sprintf("%d:0:0", dead), true},                             // libfabric's own
		{RuntimeMarker + "2024-results.csv", true},
		{RuntimeMarker + fmt.Sprint(dead) + "-0123-x", true}, // not canonical
		{RuntimeMarker + fmt.Sprint(dead) + "-5-", true},     // nothing after the start
		{RuntimeMarker + fmt.Sprint(dead) + "-5-a b", true},  // a space
		{RuntimeMarker, true},
		{"dmg-", true},
	} {
		if err := os.WriteFile(filepath.Join(dir, tc.name), []byte("data"), 0o600); err != nil {
			t.Fatal(err)
		}
		defer func() {
			_, err := os.Stat(filepath.Join(dir, tc.name))
			if (err == nil) != tc.keep {
				t.Errorf("%s: exists %v, want %v", tc.name, err == nil, tc.keep)
			}
		}()
	}
	// A directory with a runtime name is not DMG's.
	if err := os.Mkdir(filepath.Join(dir, formatRuntimeName(dead, 7, "d")), 0o755); err != nil {
		t.Fatal(err)
	}
	if n := RemoveStale(dir); n != 3 {
		t.Errorf("removed %d files, want 3", n)
	}
	if _, err := os.Stat(filepath.Join(dir, formatRuntimeName(dead, 7, "d"))); err != nil {
		t.Error("a directory was removed")
	}
}

func TestRuntimeName(t *testing.T) {
	name, err := RuntimeName("cxl-mn0-ab")
	if err != nil {
		t.Fatal(err)
	}
	pid, start, rest, ok := ParseRuntimeName(name)
	if !ok || pid != os.Getpid() || rest != "cxl-mn0-ab" || !alive(pid, start) {
		t.Errorf("%s: %d %d %q %v, alive %v", name, pid, start, rest, ok, alive(pid, start))
	}
}

// A zombie (exited, its parent not waiting yet) is not alive: a reaper
// may be slow, or never come (a container's PID 1), and the dead client
// it was must be known dead.
func TestZombieNotAlive(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Skip("no true(1):", err)
	}
	defer cmd.Wait()
	pid := cmd.Process.Pid
	var st ProcStat
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var err error
		if st, err = ReadProcStat(pid); err != nil {
			t.Fatal(err)
		}
		if st.Exited() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d never exited: state %c", pid, st.State)
		}
	}
	if alive(pid, st.Start) {
		t.Errorf("zombie pid %d (state %c) taken as alive", pid, st.State)
	}
	if !Dead(formatRuntimeName(pid, st.Start, "ep0")) {
		t.Errorf("a zombie's runtime name is not dead")
	}
}

func TestParseProcStat(t *testing.T) {
	tail := " S 1 1 1 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10"
	for _, tc := range []struct {
		line string
		want ProcStat
		ok   bool
	}{
		{"42 (dmg)" + tail, ProcStat{'S', 987654}, true},
		{"42 (a) b) c)" + tail, ProcStat{'S', 987654}, true}, // a command with ") "
		{"42 (dmg)" + strings.Replace(tail, " S ", " Z ", 1), ProcStat{'Z', 987654}, true},
		{"42 (dmg) S 1 2", ProcStat{}, false},
		{"42 dmg" + tail, ProcStat{}, false},
		{"42 (dmg)" + strings.Replace(tail, "987654", "x", 1), ProcStat{}, false},
	} {
		got, err := parseProcStat(tc.line)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseProcStat(%q) = %d, %v; want %d ok %v", tc.line, got, err, tc.want, tc.ok)
		}
	}
}

// A name the parser accepts formats back to itself: two different
// (pid, start) never share a name.
func FuzzParseRuntimeName(f *testing.F) {
	f.Add(formatRuntimeName(123, 456, "cxl-mn0-ab"))
	f.Add("dmg-2024-results.csv")
	f.Add(RuntimeMarker + "01-2-x")
	f.Fuzz(func(t *testing.T, name string) {
		pid, start, rest, ok := ParseRuntimeName(name)
		if ok && formatRuntimeName(pid, start, rest) != name {
			t.Errorf("%q parsed as %d %d %q, which formats as %q", name, pid, start, rest, formatRuntimeName(pid, start, rest))
		}
	})
}

func FuzzParseProcStat(f *testing.F) {
	f.Add("42 (dmg) S 1 1 1 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10")
	f.Fuzz(func(t *testing.T, line string) {
		parseProcStat(line) // no panic
	})
}

func TestMappedRuntime(t *testing.T) {
	ep := formatRuntimeName(77, 9, "ep3")
	pool := formatRuntimeName(78, 10, "cxl-mn0")
	maps := strings.Join([]string{
		"7f00-7f10 rw-s 00000000 00:1a 12 " + ShmDir + "/" + ep,
		"7f10-7f20 rw-s 00000000 00:1a 13 " + ShmDir + "/" + pool + " (deleted)",
		"7f20-7f30 rw-s 00000000 00:1a 14 " + ShmDir + "/fi_shm_user",
		"7f30-7f40 rw-s 00000000 00:1a 15 " + ShmDir + "/" + RuntimeMarker + "0-1-x",
		"7f40-7f50 r-xp 00000000 08:01 16 /usr/lib/libc.so.6",
		"",
	}, "\n")
	got := MappedRuntime([]byte(maps))
	want := []Mapped{{Name: ep, PID: 77, Rest: "ep3"}, {Name: pool, PID: 78, Rest: "cxl-mn0", Deleted: true}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("MappedRuntime:\n got %+v\nwant %+v", got, want)
	}
}

func FuzzMappedRuntime(f *testing.F) {
	f.Add([]byte("7f00-7f10 rw-s 00000000 00:1a 12 " + ShmDir + "/" + formatRuntimeName(1, 2, "ep0") + " (deleted)\n"))
	f.Fuzz(func(t *testing.T, maps []byte) {
		for _, m := range MappedRuntime(maps) {
			if p, _, rest, ok := ParseRuntimeName(m.Name); !ok || p != m.PID || rest != m.Rest {
				t.Errorf("%+v: not the runtime name it was parsed from", m)
			}
		}
	})
}
