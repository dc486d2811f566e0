package launch_test

// Tests across hosts: every distributed path of DMG on a cluster of
// emulated hosts (package testbed: a network namespace per host on one
// bridge, its own hostname, process ids and /dev/shm), started by the real
// mpirun through an rsh agent. Ranks on different hosts share nothing but
// the bridge, so the fabric is tcp, a peer's pid cannot be asked about and
// a host can be cut off or killed.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dmg-hpc/dmg/testbed"
)

// hostsEnv is what Open MPI needs here, as root; the test bed's mpirun
// passes its own interfaces and agent.
var hostsEnv = []string{"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_orte_execute_quiet=1"}

// onHosts returns a jobFunc placing its ranks on hosts, given as
// "h1,h2:2,..." of the test bed's host numbers (a host's slots after the
// colon).
func onHosts(bed *testbed.Bed, hosts string) jobFunc {
	return func(t *testing.T, limit time.Duration, np int, args ...string) *mpiProc {
		t.Helper()
		p := startOnHosts(t, bed, limit, hosts, np, args...)
		<-p.done
		if p.timedOut {
			t.Fatalf("timed out after %v: %s", limit, p)
		}
		return p
	}
}

// startOnHosts starts `testbed.sh mpirun -np np --host HOSTS dmg args...`.
func startOnHosts(t *testing.T, bed *testbed.Bed, limit time.Duration, hosts string, np int, args ...string) *mpiProc {
	t.Helper()
	return startOnHostsEnv(t, bed, limit, hosts, np, nil, args...)
}

// startOnHostsEnv is startOnHosts with env added to the launcher's
// environment (Open MPI's parameters).
func startOnHostsEnv(t *testing.T, bed *testbed.Bed, limit time.Duration, hosts string, np int, env []string, args ...string) *mpiProc {
	t.Helper()
	var names []string
	for _, h := range strings.Split(hosts, ",") {
		n, slots, _ := strings.Cut(h, ":")
		i, err := strconv.Atoi(n)
		if err != nil {
			t.Fatalf("host %q: %v", h, err)
		}
		name := bed.Host(i)
		if slots != "" {
			name += ":" + slots
		}
		names = append(names, name)
	}
	launcher := []string{bed.Script(), "mpirun", "-np", strconv.Itoa(np), "--host", strings.Join(names, ",")}
	return startLauncher(t, limit, launcher, append(env, hostsEnv...), args...)
}

// hostsOf lists the distinct hosts of a report's or dmg info's role map.
func hostsOf(out string) map[string]bool {
	hs := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) == 5 && (strings.HasPrefix(f[1], "cn") || strings.HasPrefix(f[1], "mn")) {
			if _, err := strconv.Atoi(f[0]); err == nil {
				hs[f[2]] = true
			}
		}
	}
	return hs
}

// TestHostsInfo: four ranks on four hosts see four hostnames, and one
// machine: the emulated hosts share this kernel and its cores, so that
// the compute nodes split the cores between them (HostCNs).
func TestHostsInfo(t *testing.T) {
	bed := testbed.Shared(t, 6)
	js := filepath.Join(t.TempDir(), "info.json")
	p := onHosts(bed, "1,2,3,4")(t, time.Minute, 4, "--roles", "cn:2,mn:2", "--json", js, "info")
	if p.code != 0 {
		t.Fatal(p)
	}
	checkRoleMap(t, p.out.String(), 2, 2, false)
	if hs := hostsOf(p.out.String()); len(hs) != 4 || !hs[bed.Host(1)] || !hs[bed.Host(4)] {
		t.Fatalf("want hosts %s, got %v:\n%s", bed.Hosts(4), hs, p.out.String())
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Ranks []struct{ Host, Machine string }
	}
	if err := json.Unmarshal(b, &rep); err != nil || len(rep.Ranks) != 4 {
		t.Fatalf("dmg info --json: %v\n%s", err, b)
	}
	for _, r := range rep.Ranks {
		if r.Machine == "" || r.Machine != rep.Ranks[0].Machine {
			t.Fatalf("ranks on emulated hosts name different machines; want this one machine for all:\n%s", b)
		}
	}
}

// TestHostsKernels: each of the six kernels on cn:2,mn:2 over four hosts,
// validated against its Graphalytics reference output; BFS and PageRank
// also on cn:1,mn:2 and cn:3,mn:1, with the same results.
func TestHostsKernels(t *testing.T) {
	bed := testbed.Shared(t, 6)
	picked := map[string]gaCase{} // a kernel's first dataset: example-directed, or the undirected one
	for _, c := range gaCases(t) {
		if _, ok := picked[c.algo]; !ok && strings.HasPrefix(c.dataset, "example-") {
			picked[c.algo] = c
		}
	}
	for _, k := range kernels {
		c, ok := picked[k.flag]
		if !ok {
			t.Fatalf("no example dataset with a %s reference output", k.flag)
		}
		t.Run(k.flag, func(t *testing.T) {
			layouts := []struct{ roles, hosts string }{{"cn:2,mn:2", "1,2,3,4"}}
			if k.flag == "bfs" || k.flag == "pagerank" {
				layouts = append(layouts, struct{ roles, hosts string }{"cn:1,mn:2", "1,2,3"}, struct{ roles, hosts string }{"cn:3,mn:1", "1,2,3,4"})
			}
			var outs []string
			for _, l := range layouts {
				out := filepath.Join(t.TempDir(), "out")
				np := strings.Count(l.hosts, ",") + 1
				p := onHosts(bed, l.hosts)(t, 2*time.Minute, np, "--roles", l.roles, "run", "--algo", c.algo, "--graph", c.props, "--out", out, "--verify")
				if p.code != 0 || !strings.Contains(p.out.String(), "verified") {
					t.Fatalf("%s on %s: %s", l.roles, c.dataset, p)
				}
				if !strings.Contains(p.out.String(), "tcp") {
					t.Errorf("%s: the report does not name tcp, the fabric across hosts:\n%s", l.roles, p.out.String())
				}
				validate(t, c, out)
				outs = append(outs, out)
			}
			for _, o := range outs[1:] {
				sameResults(t, c, outs[0], o)
			}
		})
	}
}

// TestHostsConvert: convert under mpirun with its ranks on three hosts,
// input and output on a file system every host sees, byte for byte as one
// process.
func TestHostsConvert(t *testing.T) {
	bed := testbed.Shared(t, 6)
	dir := t.TempDir()
	var b strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&b, "%d\t%d\t%g\n", (i*i)%7919*1000+3, (i*31)%4001*1000+3, float64(i%9)/8)
	}
	in := writeText(t, dir, "g.wel", b.String())
	par, one := filepath.Join(dir, "par.bel"), filepath.Join(dir, "one.bel")
	p := onHosts(bed, "1,2,3")(t, time.Minute, 3, "convert", in, par)
	if p.code != 0 || p.err.String() != "" {
		t.Fatal(p)
	}
	if _, se, code := runConvert(t, nil, nil, "-q", in, one); code != 0 {
		t.Fatalf("one process: exit %d: %s", code, se)
	}
	pb, err1 := os.ReadFile(par)
	ob, err2 := os.ReadFile(one)
	if err1 != nil || err2 != nil || len(pb) == 0 || string(pb) != string(ob) {
		t.Fatalf("3 ranks on 3 hosts wrote %d bytes (%v), one process %d (%v): they differ", len(pb), err1, len(ob), err2)
	}
}

// TestHostsPool: a served pool on two hosts, a graph loaded into it from
// two other hosts, run from those with the same compute-node count and
// from a third set of hosts with another (a re-cut over the network);
// results equal a one-job run's.
func TestHostsPool(t *testing.T) {
	bed := testbed.Shared(t, 6)
	path := filepath.Join(t.TempDir(), "pool.json")
	sp := startOnHosts(t, bed, 10*time.Minute, "1,2", 2, "--roles", "mn:2", "serve", "--pool-file", path, "--mn-mem", "256MiB")
	s := waitServe(t, path, sp, 2)
	if !strings.Contains(s.file.Provider, "tcp") {
		t.Errorf("a pool on two hosts serves over %q, want tcp", s.file.Provider)
	}
	graph := []string{"--graph", "kron:12"}
	s.job = onHosts(bed, "3,4")
	// Packed lists (--compress), re-cut over the network as they are;
	// the results are a one-job run's on records.
	s.load(t, 2, "k", append(slices.Clone(graph), "--compress"))
	for _, c := range []struct {
		hosts string
		cn    int
		algo  string
	}{{"3,4", 2, "pagerank"}, {"5:2,6", 3, "bfs"}, {"5:2,6", 3, "pagerank"}} {
		s.job = onHosts(bed, c.hosts)
		got, p := s.run(t, c.cn, "k", c.algo)
		if p.code != 0 {
			t.Fatalf("%s from hosts %s: %s", c.algo, c.hosts, p)
		}
		samePoolResults(t, fmt.Sprintf("%s on cn:%d from hosts %s", c.algo, c.cn, c.hosts), c.algo, got, oneJob(t, 2, graph, c.algo))
	}
	if l := s.ls(t); len(l.Graphs) != 2 || l.Graphs[0].Name != "k" || l.Graphs[1].CNs != 3 {
		t.Errorf("dmg ls --json: %+v; want k cut for 2 CNs and again for 3", l.Graphs)
	}
	s.stop(t)
	for i := 1; i <= 6; i++ {
		if left := bed.Procs(bed.Host(i)); len(left) > 0 {
			t.Errorf("left running on %s: %v", bed.Host(i), left)
		}
	}
}
