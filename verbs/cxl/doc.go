// Package cxl is the load/store backend of package verbs, for memory that
// every rank maps into its own address space: a CXL memory pool (a DAX
// device, /dev/daxX.Y) or, on one host, a file on a shared-memory or
// hugetlbfs mount. Selected with --fabric cxl.
//
// Each MN creates its pool as a file in Config.PoolDir (default /dev/shm),
// named "dmgjob-PID-START-cxl-mnN-RANDOM" (verbs.RuntimeName) and reserved in full with fallocate
// before anything is written, or maps its device from Config.PoolDevices;
// the MNs publish the names through the world's all-gather and every CN
// maps every MN's pool shared. READ and WRITE are copies, CAS64 and FAA64
// CPU atomics on the mapping (8-byte aligned, as on the other backends).
// The endpoints, counters, doorbells and round trips are package memfab's,
// so every report and NIC-model projection works unchanged.
//
// Ordering: the operations of a batch execute when Flush is called, and
// Flush ends with a sequentially consistent atomic (a full fence). A WRITE
// whose Flush has returned is therefore visible to any READ that any rank
// issues after it learned so — through a barrier, a collective or an
// atomic it observed — as a completed RDMA WRITE is; the cache coherence
// of the host or of the CXL fabric does the rest.
//
// Files are removed at Close; the files of dead jobs (PID gone) are removed
// when a network opens, as are the shm regions of the fabric backend, and
// nobody else's. Devices are never removed.
package cxl
