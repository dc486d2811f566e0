// Package fabric is the libfabric backend of package verbs (cgo; all of the
// module's libfabric code lives here). Each rank opens the provider's
// fabric and domain; an MN mmaps its pool, registers it and runs a progress
// thread with adaptive back-off until Close; a CN creates one FI_EP_RDM
// endpoint per worker, with its own completion queue, address vector and
// registered staging buffer, and the registered buffers it hands out
// (verbs.BufferAllocator: reads into them and writes from them skip the
// staging copy). Pool sizes, endpoint names and memory keys are exchanged
// with spmd.Comm.AllGather; Addrs gives them to a serve job to publish,
// and Attach opens a world of CNs alone on them (a served pool).
//
// A Flush copies nothing but the staging data and posts the whole batch in
// one cgo call with the *msg variants (fi_readmsg, fi_writemsg,
// fi_fetch_atomicmsg with FI_SUM, fi_compare_atomicmsg with FI_CSWAP on
// FI_UINT64), grouped by MN with FI_MORE on all but each group's last
// operation, and waits for every completion in the same call, polling with a
// back-off (spin, yield, short sleeps) and a deadline (verbs.Config.Timeout).
//
// Providers: Config.Provider names any libfabric provider; "tcp" means
// "tcp;ofi_rxm" and "verbs" means "verbs;ofi_rxm" (both need the RxM
// utility for FI_EP_RDM). The default is "shm" when every rank runs on one
// host and "tcp" otherwise. "sockets", "net" and "udp;ofi_rxd" are refused:
// on libfabric 1.17 they are broken or very slow for this traffic. An
// unavailable provider is an error listing the ones fi_getinfo offers.
//
// An shm MN outlives its clients (a served pool): it forgets the endpoints
// of departed ones (reclaim.go), and takes its queue lock back from one
// that died holding it (unlock.go). What an shm region shows of its
// queues (shmstate.go) goes into a timed-out operation's error and a
// serve job's notes. An attached job's new endpoint must first read and
// atomically add 0 to every MN's first word (its probe), or is replaced;
// over sockets any other new endpoint adds 0 too (warm), as a process's
// first atomic to an MN there takes tenths of a second.
//
//	net, err := fabric.Open(world, verbs.Config{PoolBytes: 1 << 30, Provider: "tcp"})
package fabric
