// C side of package fabric: thin wrappers over libfabric. Everything handed
// to libfabric (buffers, contexts, operation descriptors) lives in memory
// allocated here, never in Go memory.
#ifndef DMGFAB_H
#define DMGFAB_H

#include <stdint.h>
#include <stddef.h>
#include <rdma/fi_errno.h>

enum { DMG_ENODATA = FI_ENODATA, DMG_ETIMEDOUT = FI_ETIMEDOUT };

enum { DMG_READ = 0, DMG_WRITE = 1, DMG_CAS = 2, DMG_FAA = 3 };

// One queued operation. Offsets are into the endpoint's staging buffer, or
// into registered buffer buf (1-based; 0 is the staging buffer).
typedef struct {
	uint8_t kind;
	uint8_t more;     // post with FI_MORE
	uint16_t buf;
	uint32_t peer;    // index into the endpoint's fi_addr table (= MN id)
	uint64_t raddr;   // remote address as the provider expects it
	uint64_t key;     // remote MR key
	uint64_t loff;    // data (read/write) or result (atomics)
	uint64_t len;     // bytes (read/write)
	uint64_t ooff;    // operand (atomics)
	uint64_t coff;    // compare (CAS)
} dmg_op;

typedef struct dmg_fab dmg_fab;
typedef struct dmg_ep dmg_ep;
typedef struct dmg_mn dmg_mn;

// Provider info and fabric/domain; errors are negative fi_errno values.
int dmg_fab_open(const char *prov, dmg_fab **out, char *err, size_t errlen);
// Sets how this process's shm endpoint regions are named (at most 95 bytes).
void dmg_set_shm_prefix(const char *p);
void dmg_set_huge(int on);
void dmg_fab_close(dmg_fab *f);
// Makes every endpoint's post and wait return -FI_ECANCELED before its
// next provider call (a process about to end).
void dmg_fab_halt(dmg_fab *f);
// Exempts an endpoint from dmg_fab_halt (kept 1), or not (0).
void dmg_ep_keep(dmg_ep *e, int kept);
// Facts about the opened provider.
const char *dmg_fab_prov_name(dmg_fab *f);
const char *dmg_fab_domain_name(dmg_fab *f);
int dmg_fab_virt_addr(dmg_fab *f);
uint64_t dmg_fab_max_msg(dmg_fab *f);
// All providers fi_getinfo knows for our capabilities (or any, if none),
// as a comma-separated list.
int dmg_list_providers(char *buf, size_t len, int with_caps);

// MN side: pool, MR, endpoint, progress.
int dmg_mn_open(dmg_fab *f, uint64_t size, uint64_t key, dmg_mn **out, char *err, size_t errlen);
void *dmg_mn_pool(dmg_mn *m);
uint64_t dmg_mn_key(dmg_mn *m);
int dmg_mn_name(dmg_mn *m, void *buf, size_t *len);
// Runs progress with adaptive back-off until dmg_mn_stop; returns 0.
int dmg_mn_progress(dmg_mn *m);
void dmg_mn_stop(dmg_mn *m);
void dmg_mn_pause(dmg_mn *m, int paused);
// Frees a departed shm client's slot in the MN's peer map (reclaim.go).
int dmg_mn_forget(dmg_mn *m, const char *name);
// How long (ns) progress has been inside its current provider call (0:
// not inside one); whether the MN's shm region lock is taken (1), free
// (0) or unknown (-1: not shm 1.17's region); and freeing that lock for
// a holder that died in it (unlock.go).
int64_t dmg_mn_inside(dmg_mn *m);
int dmg_mn_locked(dmg_mn *m);
int64_t dmg_mn_inside_since(dmg_mn *m);
int64_t dmg_mn_progress_cpu(dmg_mn *m);
int64_t dmg_mn_lock_wait(dmg_mn *m, int64_t limit_ns, int64_t wall_ns, int *released);
void dmg_mn_unlock(dmg_mn *m);
// The queue state of shm region name, for errors and notes: the lock word
// (glibc: 1 free, 0 or less taken) and how many of looks, 150 µs apart,
// found it taken; the owner's signal; the credits senders may still
// spend; the commands queued to the owner, and how many it ever took;
// the responses queued to it. Nothing is taken or written. 0, or -1 if
// the region is not one laid out as libfabric 1.17's.
typedef struct {
	int pid, lock, taken, signal;
	uint64_t credits, cmds_taken;
	int64_t cmds, resps; // -1: unreadable
} dmg_shm_state;
int dmg_shm_region_state(const char *name, int looks, dmg_shm_state *s);
void dmg_mn_close(dmg_mn *m);

// CN side: one endpoint per worker, with its own CQ, AV and staging.
int dmg_ep_open(dmg_fab *f, const void *names, size_t namelen, int npeers, uint64_t stagekey,
		dmg_ep **out, char *err, size_t errlen);
// Grows staging to at least n bytes (preserving content) and the op table
// to at least nops entries.
int dmg_ep_reserve(dmg_ep *e, uint64_t n, int nops, uint64_t newkey, char *err, size_t errlen);
void *dmg_ep_stage(dmg_ep *e);
uint64_t dmg_ep_stagelen(dmg_ep *e);
int dmg_ep_nops(dmg_ep *e);
// Registered buffers of an endpoint: reads land in them, and writes leave
// from them, without a staging copy. Alloc returns the buffer and its id
// (≥ 1, for dmg_op.buf); free releases it (no operation may use it).
int dmg_ep_buf_alloc(dmg_ep *e, uint64_t len, uint64_t key, void **out, int *id, char *err, size_t errlen);
void dmg_ep_buf_free(dmg_ep *e, int id);
dmg_op *dmg_ep_ops(dmg_ep *e);
// Posts ops[0:n] and waits for every completion, at most timeout_ns.
// Returns 0, or a negative fi_errno with *bad = index of the failing (or
// first unfinished) op and a message in err.
int dmg_ep_run(dmg_ep *e, int n, int64_t timeout_ns, int *bad, char *err, size_t errlen);
// The two halves of dmg_ep_run: post ops[from:to] (from == 0 starts a
// batch), then wait for the n posted ops.
int dmg_ep_post(dmg_ep *e, int from, int to, int64_t timeout_ns, int *bad, char *err, size_t errlen);
int dmg_ep_wait(dmg_ep *e, int n, int64_t timeout_ns, int *bad, char *err, size_t errlen);
void dmg_ep_close(dmg_ep *e);
// The shm region name of an endpoint (fi_getname); 0, or -1.
int dmg_ep_shm_name(dmg_ep *e, char *buf, size_t len);
// Closes the endpoint itself, and so its connections, but frees nothing
// an operation still in flight may be completed into: its buffers,
// contexts, CQ and AV (the provider's progress thread may yet write them).
void dmg_ep_abandon(dmg_ep *e);

uint32_t dmg_fi_version(void);

#endif
