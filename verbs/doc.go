// Package verbs is DMG's one-sided data path: the only way graph data moves
// between compute nodes (CNs) and memory nodes (MNs). It looks like RDMA
// verbs — READ, WRITE, CAS, FAA, doorbell batches, completions — so that the
// engine's costs are the costs of a real disaggregated-memory fabric
// (DESIGN.md §1, §3).
//
// # Addresses
//
// An Addr is a 16-bit MN id << 48 | a 48-bit offset into that MN's pool
// (addr.go: MakeAddr, Addr.MN, Addr.Offset). Every operation is
// range-checked against the pool sizes, which every rank knows, before
// anything is posted; an unknown MN or a range past a pool's end is a
// *RangeError, never a wild access.
//
// # Opening the network
//
// Every rank of an spmd.World opens a Network collectively, from a backend
// package:
//
//	net, err := fabric.Open(world, verbs.Config{PoolBytes: poolBytes, Provider: "shm"})
//	// or, all ranks as goroutines in one process:
//	cluster := memfab.NewCluster()                 // once, before the ranks start
//	net, err := memfab.Open(cluster, world, verbs.Config{PoolBytes: poolBytes})
//	// or, pools as memory every process maps (a CXL pool, /dev/shm files):
//	net, err := cxl.Open(world, verbs.Config{PoolBytes: poolBytes, PoolDir: "/dev/shm"})
//	defer net.Close()                              // collective
//
// An MN gives its pool size in Config.PoolBytes, then uses net.Pool() for
// local work and calls Close when the job is done (the fabric keeps being
// progressed in the background until then). A CN creates one Endpoint per
// worker with net.NewEndpoint().
//
// # Batches
//
// An Endpoint queues operations and Flush executes them: one doorbell per MN
// touched, one wait for all completions — one dependent round trip. On this
// kind of hardware the number of operations and round trips is the cost, not
// the bytes, so callers batch (Flush rarely) and merge (ReadMerger, in
// merge.go, joins reads of adjacent or nearby remote ranges into one
// operation, and hands out views of its buffer, registered memory where the
// backend has it, so that the caller decodes the data where the READ put
// it).
//
//	var entry [32]byte
//	var old uint64
//	if err := ep.Read(entry[:], indexAddr); err != nil { ... } // range-checked now
//	if err := ep.(verbs.Atomics).FAA64(counterAddr, 1, &old); err != nil { ... }
//	if err := ep.Flush(); err != nil { ... } // entry and old are filled
//
// A completion that does not arrive within Config.Timeout (DefaultTimeout)
// fails Flush with an error that names the MN and its world rank.
//
// # Counting and modelling
//
// Every endpoint counts operations by kind, bytes, doorbells and round trips
// (Counters, CountersByMN; counters.go); the counts are cheap enough to stay
// on. A NIC Profile (model.go) turns them into a modelled fabric time
// (Profile.Time), so runs on a machine without RDMA hardware can be
// projected onto one with it. Bench (bench.go) measures an endpoint's rates
// for `dmg bench verbs`.
//
// # Backends and tests
//
// Package memfab is the in-process backend (unit tests, --local); package
// cxl runs memfab's endpoints over pools that every process maps (a CXL
// device, /dev/shm files; --fabric cxl); package fabric is the cgo
// libfabric backend (shm, tcp, verbs;ofi_rxm, efa, cxi). Package verbstest
// is the conformance suite all three run.
package verbs
