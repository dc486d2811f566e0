package launch

import (
	"os"
	"strconv"
	"syscall"
)

// defaultMNNice is --mn-nice's default. A memory node's process has little
// to do: its fabric progress thread serves the atomics and the command
// queues of libfabric's shm, and its MPI thread waits at every phase
// boundary. Where it shares cores with compute nodes (one host, or an
// oversubscribed allocation), both spin (the progress thread on the shm
// region's lock while a CN copies, the MPI thread in sched_yield) and took
// 0.6-1.2 s of CPU in a 1.1-1.6 s kron:20 SSSP on two cores. At a lower
// priority they still run whenever a core is free, and leave it to a
// computing rank when not: cn:2,mn:2 over shm, interleaved runs, SSSP
// 1.106 → 0.807 s (nice 10; 0.846 s at 19), MN CPU 0.39-0.87 →
// 0.09-0.38 s (docs/design.md). On a dedicated memory node it changes
// nothing.
const defaultMNNice = 10

// renice sets every thread of this process to nice n; the threads created
// later inherit it from their creator. Linux keeps a nice value per
// thread, so setpriority on the process id alone would reach only the
// main thread. It is best effort: a thread that ended meanwhile, or a
// system that refuses, leaves the priority as it was, which is only
// slower.
func renice(n int) {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		_ = syscall.Setpriority(syscall.PRIO_PROCESS, 0, n)
		return
	}
	for _, t := range tasks {
		if tid, err := strconv.Atoi(t.Name()); err == nil {
			_ = syscall.Setpriority(syscall.PRIO_PROCESS, tid, n)
		}
	}
}
