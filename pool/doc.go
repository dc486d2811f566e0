// Package pool is the contract between `dmg serve` and the compute jobs
// that use its memory: the pool file, the layout of each memory node's
// (MN's) pool header and of the catalogue on MN 0, and a Client that works
// the catalogue with one-sided verbs.
//
// # The pool
//
// `dmg serve` runs MNs alone: each registers a pool and stays up until it
// is asked to stop. It writes a pool file (WriteFile): a version, a random
// token, the provider, and per MN its host, pool size, remote base, key
// and fabric address. Compute jobs started later read the file (ReadFile),
// open endpoints to the MNs, and Connect, which reads every MN's header and
// refuses a file whose pool is gone, replaced or stopping, or whose sizes
// are not the ones the MNs registered: every later access is checked
// against those sizes (verbs.CheckRange) before it is posted, since over
// shm nothing at the MN checks a READ or a WRITE (docs/design.md).
//
// # Layout
//
// Every MN's pool (8-byte words, little-endian; hosts are little-endian):
//
//	0        header (HeaderBytes = 4 KiB)
//	         word 0 Magic "DMGPOOL1"   word 3 number of MNs
//	         word 1 token              word 4 stop (nonzero: end serving)
//	         word 2 this MN's index    word 5 beat (MN's clock, Unix ms, every 250 ms)
//	                                   word 6 size (the bytes the MN registered)
//	4 KiB    MN 0 only: the catalogue
//	         +0  lock word (holder id, 0 = free)
//	         +8  lock time (Unix ms when taken)
//	         +64 MaxSlots × SlotBytes slots (state, lease, beat, ... extents)
//	1 MiB    DataStart: graph data, allocated first-fit in Align (4 KiB) steps
//	size     end of the pool
//
// A slot is Free, Loading (a job is writing the graph), Ready, Job (a
// job's private regions) or Checkpoint (a run's kept state, which
// outlives the run: checkpoint.go, runs.go). It records the graph's name
// and sizes, a descriptor extent (Aux) and one extent per MN (Ext).
//
// # Locks and leases
//
// Catalogue changes (Alloc, Put, Drop, Reclaim) are made under the
// catalogue lock (Lock, Unlock), taken with CAS on the lock word. A lock
// whose time is older than StaleAfter (10 s) belongs to a dead job and is
// broken.
//
// A job using a slot holds its lease: the slot's lease word is the
// holder's id (CAS from 0), and the holder rewrites the slot's beat word
// with its clock every BeatEvery (KeepAlive). A lease whose beat is older
// than StaleAfter has expired and may be taken over. Loading and Job slots
// with an expired lease, and Job slots whose holder gave the lease up,
// are a dead job's leftovers: Alloc treats their extents as free and
// Reclaim frees them. Ready graphs stay.
//
// A Checkpoint slot's lease is its run's holder id, never renewed: the
// run is running while a live Job slot has that id, and unfinished after,
// for a later run of the same graph, kernel and parameters to resume
// (ResumeCheckpoint). Reclaim leaves it; its run's end or a drop of its
// graph frees it.
//
// Runs read a Ready graph together (Hold): each holds a Job slot of its
// own that names the graph (and later its regions). A writer, a drop,
// takes the graph's own lease, which keeps new readers out, and then
// finds the live readers (Readers) under the catalogue lock.
//
// A lease's (and the lock's) age is the reader's clock minus the holder's
// stamp: the holder's wall clock decides. The hosts' clocks must agree to
// within a few seconds, far less than StaleAfter, or live holders are
// taken for dead (a clock behind) or dead ones linger (a clock ahead).
package pool
