package launch

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pkg/errors"
	"github.com/spf13/cobra"

	"github.com/dmg-hpc/dmg/pool"
	"github.com/dmg-hpc/dmg/verbs"
)

// dmg stop ends a serve job. It asks first, through the pool: every MN's
// stop word, which the serve job reads within a beat, and then it waits
// for the job to end (its pool file goes). A pool that cannot be asked
// (an MN frozen, a provider stuck behind a stopped client's lock) or does
// not end is ended by signal: SIGTERM, and SIGCONT for a stopped MN, to
// each MN process the pool file names on this host, after checking that
// the process is that MN (it started before the pool file was written
// and runs dmg serve); SIGKILL for one still there after stopGrace, and
// then the pool file is removed. MNs on other hosts cannot be signalled
// from here: the error names them.
func stopCmd(stdout io.Writer) *cobra.Command {
	af := &adminFlags{}
	c := &cobra.Command{
		Use:   "stop",
		Short: "end a serve job (its pools and every graph in them)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return stopPool(af, stdout)
		},
	}
	af.register(c)
	return c
}

// stopGrace is how long dmg stop waits for a serve job to end after its
// stop words, and again after its signal.
const stopGrace = 5 * time.Second

// askLimit bounds dmg stop's asking, whatever it waits for: attaching
// (an endpoint's probe, 5 tries of 2 s), the stop words (the timeout), a
// provider call the watch reports stuck (the timeout and 5 s).
func askLimit(timeout time.Duration) time.Duration { return 2*timeout + 20*time.Second }

func stopPool(af *adminFlags, stdout io.Writer) error {
	if af.poolFile == "" {
		return BadInputf("launch: --pool-file PATH is required")
	}
	f, err := readPoolFile(af.poolFile)
	if err != nil {
		return err
	}
	asked := make(chan error, 2)
	af.stuck = func(msg string) { asked <- errors.New(msg) }
	go func() { // a stuck provider call keeps it for good: the process ends without it
		asked <- admin(af, func(a *attached) error { return a.c.Stop() })
	}()
	limit := askLimit(af.timeout)
	select {
	case err = <-asked:
	case <-time.After(limit):
		// Not a provider call the watch sees (which says so sooner): a
		// wait of any other kind gets the same answer.
		err = errors.Errorf("no answer within %v", limit)
	}
	if exitCode(err) == ExitBadInput {
		return err // a pool file that is not this pool's: nothing to signal
	} else if err == nil {
		if ended(af.poolFile, f, stopGrace) {
			fmt.Fprintf(stdout, "dmg stop: the pool of %s has ended\n", af.poolFile)
			return nil
		}
		err = errors.Errorf("its serve job did not end within %v of its stop words", stopGrace)
	}
	return signalServe(af.poolFile, f, err, stdout)
}

// ended waits at most d for the serve job of pool file f at path to end:
// its file removed or replaced, or every MN on this host gone.
func ended(path string, f *pool.File, d time.Duration) bool {
	host := hostname()
	for deadline := time.Now().Add(d); ; time.Sleep(50 * time.Millisecond) {
		now, err := pool.ReadFile(path)
		if err != nil || now.Token != f.Token {
			return true
		}
		alive := 0
		for _, mn := range f.MNs {
			if mn.Host != host || !gone(mn.PID) {
				alive++
			}
		}
		if alive == 0 || time.Now().After(deadline) {
			return alive == 0
		}
	}
}

// signalServe ends the serve job of pool file f by signal, after cause
// kept dmg stop from asking it.
func signalServe(path string, f *pool.File, cause error, stdout io.Writer) error {
	host := hostname()
	var pids []int
	var elsewhere []string
	for m, mn := range f.MNs {
		switch {
		case mn.Host != host:
			elsewhere = append(elsewhere, fmt.Sprintf("MN %d (pid %d on %s)", m, mn.PID, mn.Host))
		case gone(mn.PID):
		case !isServe(mn.PID, f.Created):
			return errors.Errorf("dmg stop: the pool of %s did not stop (%v), and its MN %d's pid %d is not its serve job's any more; end the job with scancel or a kill of its mpirun", path, cause, m, mn.PID)
		default:
			pids = append(pids, mn.PID)
		}
	}
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGTERM)
		syscall.Kill(pid, syscall.SIGCONT) // a stopped MN then takes it
	}
	how := "SIGTERM"
	if !ended(path, f, stopGrace) && len(elsewhere) == 0 {
		how = "SIGTERM, then SIGKILL"
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		if !ended(path, f, stopGrace) {
			return errors.Errorf("dmg stop: the pool of %s did not stop (%v), and its MNs (pids %s) outlived SIGKILL", path, cause, joinInts(pids))
		}
	}
	if len(elsewhere) > 0 {
		return errors.Errorf("dmg stop: the pool of %s did not stop (%v); ended its MNs on %s with SIGTERM (pids %s), but not %s: end the job there, with scancel or a kill of its mpirun", path, cause, host, joinInts(pids), strings.Join(elsewhere, ", "))
	}
	if now, err := pool.ReadFile(path); err == nil && now.Token == f.Token {
		os.Remove(path) // a killed serve job leaves it
	}
	fmt.Fprintf(stdout, "dmg stop: the pool of %s did not answer (%v); its serve job was ended with %s (pids %s)\n", path, cause, how, joinInts(pids))
	return nil
}

// isServe tells whether process pid runs dmg serve and started before
// created (the pool file's time): not another process given its pid since.
func isServe(pid int, created time.Time) bool {
	cmd, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || !strings.Contains("\x00"+string(cmd), "\x00serve\x00") {
		return false
	}
	started, err := procStarted(pid)
	return err == nil && !started.After(created)
}

// procStarted is when process pid started, from its start time in clock
// ticks after boot (/proc/PID/stat; Linux's USER_HZ is 100) and the boot
// time (/proc/stat btime).
func procStarted(pid int) (time.Time, error) {
	ticks, err := verbs.ProcStart(pid)
	if err != nil {
		return time.Time{}, err
	}
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "btime "); ok {
			boot, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return time.Time{}, err
			}
			return time.Unix(boot, 0).Add(time.Duration(ticks) * 10 * time.Millisecond), nil
		}
	}
	return time.Time{}, errors.New("no btime in /proc/stat")
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
