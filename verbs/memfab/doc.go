// Package memfab is the load/store backend of package verbs: with Open,
// every rank is a goroutine of one process and the MN pools are Go memory
// shared through a Cluster. It has the same semantics as the libfabric backend — range
// checks before posting, 8-byte atomics that are truly atomic
// (sync/atomic), batches executed at Flush, the same counters — and is what
// unit tests and `dmg --local` use.
//
// Create one Cluster before the ranks start and give it to every rank:
//
//	cluster := memfab.NewCluster()
//	err := spmd.RunLocal(n, func(rt spmd.Runtime) error {
//		w, err := spmd.NewWorld(rt, roles)
//		...
//		net, err := memfab.Open(cluster, w, verbs.Config{PoolBytes: size})
//		...
//		return net.Close() // collective
//	})
//
// A Cluster serves one job at a time; it may be reused by later jobs.
//
// The endpoints work on any memory the rank can address: OpenMemory takes
// a Memory that creates and attaches the pools, which is how package
// verbs/cxl runs the same endpoints over files mapped by every process.
package memfab
