package launch

import "testing"

func TestMachineOf(t *testing.T) {
	status := "Name:\tdmg\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\nMems_allowed_list:\t0\n"
	for _, c := range []struct {
		name, boot, status, host, want string
	}{
		{"a kernel and its cores", "1b2c-77\n", status, "h1", "1b2c-77 cpus 0-1"},
		{"another namespace's host name, the same machine", "1b2c-77\n", status, "h2", "1b2c-77 cpus 0-1"},
		{"a cpuset of its own (Slurm's task/cgroup)", "1b2c-77\n", "Cpus_allowed_list:\t2-3,6\n", "h1", "1b2c-77 cpus 2-3,6"},
		{"no CPU list", "1b2c-77", "Name:\tdmg\n", "h1", "1b2c-77 cpus ?"},
		{"no boot id: the host name", "", status, "h1", "host h1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := machineOf([]byte(c.boot), []byte(c.status), c.host); got != c.want {
				t.Errorf("machineOf(%q, %q, %q) = %q, want %q", c.boot, c.status, c.host, got, c.want)
			}
		})
	}
}
