#include "dmgfab.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

// libfabric links the PSM providers' libraries, and libinfinipath's
// constructor installs its own handler for SIGSEGV, SIGBUS, SIGILL and
// SIGFPE, which writes a backtrace file and ends the process. Go's runtime, which
// installs its handlers after every constructor has run, would forward a
// crash in C code to it: a rank died silently. Restored to the default
// here (this constructor runs after its libraries'), Go reports such a
// crash itself, with the C program counter and every goroutine's stack.
__attribute__((constructor)) static void dmg_default_crash_handlers(void) {
	int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE};
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		struct sigaction old;
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_DFL) signal(sigs[i], SIG_DFL);
	}
}

uint32_t dmg_fi_version(void) { return FI_VERSION(1, 9); }

struct dmg_fab {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	// write_flags are added to every WRITE: FI_DELIVERY_COMPLETE, so that a
	// completed WRITE is in the MN's memory; none on shm, whose WRITEs
	// without it are copied by the initiator before they complete (the
	// provider's fast path, FI_MR_VIRT_ADDR and no RMA ordering), and with
	// it wait for the MN's progress thread to do the copy.
	uint64_t write_flags;
	// halted, once set (dmg_fab_halt), makes every endpoint's post and
	// wait loops return before their next provider call.
	int halted;
};

struct dmg_mn {
	dmg_fab *f;
	void *pool;
	size_t maplen;
	struct fid_mr *mr;
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_av *av;
	volatile int stop;
	volatile int paused;
	int blocking; // CQ has a wait object: progress sleeps in fi_cq_sread
	// inside is when (now_ns) progress entered its current provider call,
	// 0 between calls: a call that lasts is a progress thread spinning on
	// a lock, or waiting for a core (dmg_mn_inside).
	int64_t inside;
	// pclock is the progress thread's CPU clock, once pclock_ok is set
	// (dmg_mn_progress_cpu): a call that lasts while the thread spins
	// spends CPU; one that lasts while the thread waits for a core does not.
	clockid_t pclock;
	int pclock_ok;
	// calls is held by progress around each provider call, and by a
	// forget (dmg_mn_forget): the provider's peer map then never changes
	// under a command being processed.
	pthread_mutex_t calls;
	// head is this MN's own shm region, mapped again (NULL when the
	// provider is not shm, or its region is not laid out as expected).
	struct smr_head *head;
};

typedef struct {
	char *p;
	uint64_t len;
	struct fid_mr *mr;
	void *desc;
} dmg_buf;

struct dmg_ep {
	dmg_fab *f;
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_av *av;
	fi_addr_t *peers;
	int npeers;
	char *stage;
	uint64_t stagelen;
	struct fid_mr *mr;
	void *desc;
	dmg_op *ops;
	struct fi_context2 *ctx;
	uint8_t *done;
	int nops;
	int posted, completed; // in the current batch
	dmg_buf *bufs;         // registered buffers; a free slot has p == NULL
	int nbufs;
	int kept; // goes on after dmg_fab_halt (dmg_ep_keep)
};

static void seterr(char *err, size_t errlen, const char *what, int ret) {
	snprintf(err, errlen, "%s: %s (%d)", what, fi_strerror(ret < 0 ? -ret : ret), ret);
}

static int64_t now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}


// shm_prefix begins the names of this process's shm endpoint regions:
// verbs.RuntimeName("") without its last part, set before any endpoint.
static char shm_prefix[96] = "dmgjob-0-0-";

void dmg_set_shm_prefix(const char *p) {
	snprintf(shm_prefix, sizeof shm_prefix, "%s", p);
}

// nap sleeps briefly; the first nap on a thread lowers its timer slack from
// the default 50 µs so that short naps stay short.
static void nap(long ns) {
	static __thread int slack_set;
	if (!slack_set) { prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0); slack_set = 1; }
	struct timespec ts = {0, ns};
	nanosleep(&ts, NULL);
}

static struct fi_info *hints_for(const char *prov) {
	struct fi_info *h = fi_allocinfo();
	if (!h) return NULL;
	h->caps = FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
	h->ep_attr->type = FI_EP_RDM;
	h->mode = FI_CONTEXT | FI_CONTEXT2;
	h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
	h->domain_attr->threading = FI_THREAD_SAFE;
	h->tx_attr->op_flags = FI_COMPLETION;
	if (prov) h->fabric_attr->prov_name = strdup(prov);
	return h;
}

int dmg_list_providers(char *buf, size_t len, int with_caps) {
	struct fi_info *h = with_caps ? hints_for(NULL) : NULL;
	struct fi_info *list = NULL;
	int ret = fi_getinfo(dmg_fi_version(), NULL, NULL, 0, h, &list);
	if (h) fi_freeinfo(h);
	buf[0] = 0;
	if (ret) return ret;
	size_t used = 0;
	for (struct fi_info *i = list; i; i = i->next) {
		const char *p = i->fabric_attr->prov_name;
		// Skip duplicates (one entry per domain/address format).
		int dup = 0;
		for (struct fi_info *j = list; j != i; j = j->next)
			if (strcmp(j->fabric_attr->prov_name, p) == 0) { dup = 1; break; }
		if (dup) continue;
		int n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", p);
		if (n < 0 || (size_t)n >= len - used) break;
		used += n;
	}
	fi_freeinfo(list);
	return 0;
}

// rxm_auto_progress says whether rxm's data progress thread is asked for
// (FI_OFI_RXM_DATA_AUTO_PROGRESS, which launch sets for a serve job) on an rxm
// provider: the hints must then ask FI_PROGRESS_AUTO too. Otherwise rxm
// gives tcp's CQ a poll-set wait, and 1.17's thread (rxm_cm_atomic_progress)
// passes the address of a struct pollfd where libfabric expects a struct
// fi_wait_pollfd: libfabric copies the set to a pointer read from the
// thread's uninitialised stack (its canary, in core dumps here) whenever
// the word before it is large enough, and the rank dies of SIGSEGV (3 runs
// of TestHostsPoolConnectWhileComputing in 12). Asked for, the CQ waits on
// an epoll fd, the call writes one int, and the thread runs as designed.
static int rxm_auto_progress(const char *prov) {
	const char *v = getenv("FI_OFI_RXM_DATA_AUTO_PROGRESS");
	if (!prov || !strstr(prov, "ofi_rxm") || !v) return 0;
	return strcmp(v, "1") == 0 || strcasecmp(v, "true") == 0 || strcasecmp(v, "yes") == 0 || strcasecmp(v, "on") == 0;
}

int dmg_fab_open(const char *prov, dmg_fab **out, char *err, size_t errlen) {
	dmg_fab *f = calloc(1, sizeof *f);
	if (!f) return -FI_ENOMEM;
	struct fi_info *h = hints_for(prov);
	if (!h) { free(f); return -FI_ENOMEM; }
	if (rxm_auto_progress(prov)) h->domain_attr->data_progress = FI_PROGRESS_AUTO;
	int ret = fi_getinfo(dmg_fi_version(), NULL, NULL, 0, h, &f->info);
	fi_freeinfo(h);
	if (ret) { seterr(err, errlen, "fi_getinfo", ret); free(f); return ret; }
	ret = fi_fabric(f->info->fabric_attr, &f->fabric, NULL);
	if (ret) { seterr(err, errlen, "fi_fabric", ret); dmg_fab_close(f); return ret; }
	ret = fi_domain(f->fabric, f->info, &f->domain, NULL);
	if (ret) { seterr(err, errlen, "fi_domain", ret); dmg_fab_close(f); return ret; }
	f->write_flags = FI_DELIVERY_COMPLETE;
	if (strcmp(f->info->fabric_attr->prov_name, "shm") == 0 && (f->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) &&
	    !(f->info->tx_attr->msg_order & (FI_ORDER_RAR | FI_ORDER_RAW | FI_ORDER_RAS | FI_ORDER_WAR | FI_ORDER_WAW | FI_ORDER_WAS | FI_ORDER_SAR | FI_ORDER_SAW)))
		f->write_flags = 0;
	*out = f;
	return 0;
}

void dmg_fab_halt(dmg_fab *f) { __atomic_store_n(&f->halted, 1, __ATOMIC_SEQ_CST); }

static int halted(dmg_ep *e) {
	return __atomic_load_n(&e->f->halted, __ATOMIC_SEQ_CST) && !__atomic_load_n(&e->kept, __ATOMIC_SEQ_CST);
}

static int halt_error(int i, int *bad, char *err, size_t errlen) {
	*bad = i;
	snprintf(err, errlen, "halted: the process is ending");
	return -FI_ECANCELED;
}

void dmg_ep_keep(dmg_ep *e, int kept) { __atomic_store_n(&e->kept, kept, __ATOMIC_SEQ_CST); }

void dmg_fab_close(dmg_fab *f) {
	if (!f) return;
	if (f->domain) fi_close(&f->domain->fid);
	if (f->fabric) fi_close(&f->fabric->fid);
	if (f->info) fi_freeinfo(f->info);
	free(f);
}

const char *dmg_fab_prov_name(dmg_fab *f) { return f->info->fabric_attr->prov_name; }
const char *dmg_fab_domain_name(dmg_fab *f) { return f->info->domain_attr->name; }
int dmg_fab_virt_addr(dmg_fab *f) { return (f->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0; }
uint64_t dmg_fab_max_msg(dmg_fab *f) { return f->info->ep_attr->max_msg_size; }

// open_ep creates an endpoint with its CQ and AV, bound but not enabled.
static int open_ep(dmg_fab *f, int wait, struct fid_ep **ep, struct fid_cq **cq, struct fid_av **av, char *err, size_t errlen) {
	struct fi_cq_attr cqa = {0};
	cqa.format = FI_CQ_FORMAT_CONTEXT;
	cqa.wait_obj = wait ? FI_WAIT_UNSPEC : FI_WAIT_NONE;
	int ret = fi_cq_open(f->domain, &cqa, cq, NULL);
	if (ret) { seterr(err, errlen, "fi_cq_open", ret); return ret; }
	struct fi_av_attr ava = {0};
	ava.type = FI_AV_TABLE;
	ret = fi_av_open(f->domain, &ava, av, NULL);
	if (ret) { seterr(err, errlen, "fi_av_open", ret); return ret; }
	ret = fi_endpoint(f->domain, f->info, ep, NULL);
	if (ret) { seterr(err, errlen, "fi_endpoint", ret); return ret; }
	if (strcmp(f->info->fabric_attr->prov_name, "shm") == 0) {
		// shm names each endpoint's region in /dev/shm "PID:N:..." by
		// default; a rank that was killed leaves its regions behind, and a
		// later process with the same PID then fails fi_enable with EBUSY.
		// A name with this process's start time cannot meet a stale one,
		// and its marker tells it from a user's file (verbs.RuntimeName;
		// the prefix is set by dmg_set_shm_prefix).
		static int counter;
		char name[128];
		snprintf(name, sizeof name, "%sep%d", shm_prefix, __sync_fetch_and_add(&counter, 1));
		ret = fi_setname(&(*ep)->fid, name, strlen(name) + 1);
		if (ret) { seterr(err, errlen, "fi_setname", ret); return ret; }
	}
	ret = fi_ep_bind(*ep, &(*cq)->fid, FI_TRANSMIT | FI_RECV);
	if (ret) { seterr(err, errlen, "fi_ep_bind(cq)", ret); return ret; }
	ret = fi_ep_bind(*ep, &(*av)->fid, 0);
	if (ret) { seterr(err, errlen, "fi_ep_bind(av)", ret); return ret; }
	return 0;
}

// reg registers buf; with FI_MR_ENDPOINT it binds the MR to ep and enables it.
static int reg(dmg_fab *f, struct fid_ep *ep, void *buf, size_t len, uint64_t access, uint64_t key,
	       struct fid_mr **mr, char *err, size_t errlen) {
	int ret = fi_mr_reg(f->domain, buf, len, access, 0, key, 0, mr, NULL);
	if (ret) { seterr(err, errlen, "fi_mr_reg", ret); return ret; }
	if (f->info->domain_attr->mr_mode & FI_MR_ENDPOINT) {
		ret = fi_mr_bind(*mr, &ep->fid, 0);
		if (ret) { seterr(err, errlen, "fi_mr_bind", ret); return ret; }
		ret = fi_mr_enable(*mr);
		if (ret) { seterr(err, errlen, "fi_mr_enable", ret); return ret; }
	}
	return 0;
}

// Transparent huge pages for large memory (the MN pool, registered
// buffers of 2 MiB and more): the first touch of each 2 MiB is then one
// fault, not 512, which matters most on virtual machines, and accesses miss
// the TLB less. The advice is only advice; without THP nothing changes.
#define HUGE_PAGE (2u << 20)

// huge_ok is hugemem.Advised(), set once before any allocation
// (dmg_set_huge): where a huge page is new host memory at every first
// touch, the advice costs more than it saves.
static int huge_ok = 1;

void dmg_set_huge(int on) { huge_ok = on; }

static void advise_huge(void *p, size_t len) {
#ifdef MADV_HUGEPAGE
	if (huge_ok && len >= HUGE_PAGE) madvise(p, len, MADV_HUGEPAGE);
#endif
}

// alloc_buf allocates len bytes for registration: page-aligned, and
// huge-page-aligned and advised from 2 MiB on.
static void *alloc_buf(size_t len) {
	void *p = NULL;
	size_t align = len >= HUGE_PAGE ? HUGE_PAGE : 4096;
	if (posix_memalign(&p, align, len ? len : 1)) return NULL;
	advise_huge(p, len);
	return p;
}

// The start of libfabric 1.17's shm region (struct smr_region in
// include/ofi_shm.h, SMR_VERSION 4): every endpoint's region begins so,
// and its lock is the spin lock under which a sender queues a command in
// it (and, on the fast path, copies a READ or WRITE with
// process_vm_readv/writev). A sender killed inside leaves it taken: every
// later sender, and the owner's progress, spin on it for ever.
#define SMR_HEAD_VERSION 4
struct smr_head {
	uint8_t version;
	uint8_t resv;
	uint16_t flags;
	int pid; // the owner's, written last when the region is ready
	uint8_t cma_cap_peer;
	uint8_t cma_cap_self;
	uint32_t max_sar_buf_per_peer;
	void *base_addr; // where the owner maps it
	pthread_spinlock_t lock;
};
_Static_assert(offsetof(struct smr_head, lock) == 24, "libfabric 1.17's smr_region has its lock at byte 24");

// map_head maps the first page of shm region name (in /dev/shm) and
// checks that it is laid out as struct smr_head says: its version, and
// its owner pid when pid > 0. NULL if not.
static struct smr_head *map_head(const char *name, int pid) {
	int fd = shm_open(name, O_RDWR, 0);
	if (fd < 0) return NULL;
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) return NULL;
	struct smr_head *h = p;
	if (h->version != SMR_HEAD_VERSION || (pid > 0 && h->pid != pid)) {
		munmap(p, 4096);
		return NULL;
	}
	return h;
}

// word_taken tells whether a glibc x86-64 spin lock's word says taken (0
// or below; free is 1), by reading it alone: for a look that must not
// take the lock.
static inline int word_taken(const volatile int *word) { return *word <= 0; }

// head_locked tells whether a region's lock is taken, with the C
// library's own calls (glibc on x86-64 counts down from 1, free, to 0 and
// below, taken): a lock that is free is taken and given back at once.
static int head_locked(struct smr_head *h) {
	if (pthread_spin_trylock(&h->lock) != 0) return 1;
	pthread_spin_unlock(&h->lock);
	return 0;
}

// The rest of struct smr_region's head, after the lock: its signal (an
// ofi_atomic32_t, 4 bytes, or 8 in a debug build: the layout whose
// total_size is the file's size is the one read), the owner's map
// pointer, the region's size, the queue's credits and the queues'
// offsets. A queue (OFI_DECLARE_CIRQUE) begins with its size, mask and
// read and write counts.
struct smr_tail {
	void *map;
	size_t total_size;
	size_t cmd_cnt;
	size_t sar_cnt;
	size_t cmd_queue_offset;
	size_t resp_queue_offset;
};
struct smr_cirque_head {
	size_t size, size_mask, rcnt, wcnt;
};

// queue_at is the head of the queue at offset off of region r (size
// bytes); NULL if off cannot be a queue's.
static const volatile struct smr_cirque_head *queue_at(const char *r, size_t size, size_t off) {
	if (off < sizeof(struct smr_head) || off > size - sizeof(struct smr_cirque_head)) return NULL;
	return (const volatile struct smr_cirque_head *)(r + off);
}

// queue_used is how many entries queue q holds; -1 if it is unreadable.
static int64_t queue_used(const volatile struct smr_cirque_head *q) {
	if (!q) return -1;
	size_t w = q->wcnt, rd = q->rcnt;
	return w - rd <= q->size ? (int64_t)(w - rd) : -1;
}

int dmg_shm_region_state(const char *name, int looks, dmg_shm_state *s) {
	memset(s, 0, sizeof *s);
	int fd = shm_open(name, O_RDONLY, 0);
	if (fd < 0) return -1;
	struct stat st;
	if (fstat(fd, &st) || st.st_size < 4096) { close(fd); return -1; }
	size_t size = (size_t)st.st_size;
	char *r = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (r == MAP_FAILED) return -1;
	const struct smr_head *h = (const void *)r;
	const struct smr_tail *t = NULL;
	for (size_t at = offsetof(struct smr_head, lock) + 8; at <= offsetof(struct smr_head, lock) + 16 && !t; at += 8) {
		const struct smr_tail *c = (const void *)(r + at);
		if (c->total_size == size) t = c;
	}
	int ret = -1;
	if (h->version == SMR_HEAD_VERSION && t) {
		s->pid = h->pid;
		const volatile int *word = (const volatile int *)&h->lock;
		s->lock = *word;
		for (int i = 0; i < looks; i++) { // 150 µs apart, never taking it
			if (word_taken(word)) s->taken++;
			nap(150000);
		}
		s->signal = *(const volatile int *)(r + offsetof(struct smr_head, lock) + 4);
		s->credits = t->cmd_cnt;
		const volatile struct smr_cirque_head *cmds = queue_at(r, size, t->cmd_queue_offset);
		s->cmds = queue_used(cmds);
		s->cmds_taken = cmds ? cmds->rcnt : 0;
		s->resps = queue_used(queue_at(r, size, t->resp_queue_offset));
		ret = 0;
	}
	munmap(r, size);
	return ret;
}

int dmg_ep_shm_name(dmg_ep *e, char *buf, size_t len) {
	size_t n = len;
	if (!e || !e->ep || fi_getname(&e->ep->fid, buf, &n) || n > len || !memchr(buf, 0, n)) return -1;
	return 0;
}

int dmg_mn_open(dmg_fab *f, uint64_t size, uint64_t key, dmg_mn **out, char *err, size_t errlen) {
	dmg_mn *m = calloc(1, sizeof *m);
	if (!m) return -FI_ENOMEM;
	pthread_mutex_init(&m->calls, NULL);
	m->f = f;
	m->maplen = size ? size : 4096;
	m->pool = mmap(NULL, m->maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m->pool == MAP_FAILED) {
		m->pool = NULL;
		snprintf(err, errlen, "mmap of %zu bytes: %s", m->maplen, strerror(errno));
		dmg_mn_close(m);
		return -FI_ENOMEM;
	}
	advise_huge(m->pool, m->maplen);
	// shm's fi_cq_sread ignores its timeout, so only other providers
	// (tcp;ofi_rxm: socket progress) let the MN sleep in the CQ.
	m->blocking = strcmp(f->info->fabric_attr->prov_name, "shm") != 0;
	int ret = open_ep(f, m->blocking, &m->ep, &m->cq, &m->av, err, errlen);
	if (ret && m->blocking) {
		m->blocking = 0;
		if (m->cq) { fi_close(&m->cq->fid); m->cq = NULL; }
		if (m->av) { fi_close(&m->av->fid); m->av = NULL; }
		if (m->ep) { fi_close(&m->ep->fid); m->ep = NULL; }
		ret = open_ep(f, 0, &m->ep, &m->cq, &m->av, err, errlen);
	}
	if (ret) { dmg_mn_close(m); return ret; }
	ret = reg(f, m->ep, m->pool, m->maplen, FI_REMOTE_READ | FI_REMOTE_WRITE | FI_READ | FI_WRITE, key, &m->mr, err, errlen);
	if (ret) { dmg_mn_close(m); return ret; }
	ret = fi_enable(m->ep);
	if (ret) { seterr(err, errlen, "fi_enable", ret); dmg_mn_close(m); return ret; }
	if (strcmp(f->info->fabric_attr->prov_name, "shm") == 0) { // its region exists from fi_enable on
		char name[256];
		size_t len = sizeof name;
		if (fi_getname(&m->ep->fid, name, &len) == 0 && len <= sizeof name && memchr(name, 0, len))
			m->head = map_head(name, getpid());
	}
	*out = m;
	return 0;
}

void *dmg_mn_pool(dmg_mn *m) { return m->pool; }
uint64_t dmg_mn_key(dmg_mn *m) { return fi_mr_key(m->mr); }
int dmg_mn_name(dmg_mn *m, void *buf, size_t *len) { return fi_getname(&m->ep->fid, buf, len); }

// Target-side progress. Nothing completes on the MN (one-sided ops make no
// target completions), but reading the CQ drives the provider: shm's
// atomics, the commands its fast path leaves (each READ or WRITE takes
// one of the queue's credits until the MN's progress reads it), and
// connection set-up; all of tcp;ofi_rxm. A poll that takes long did work,
// so the loop stays hot; idle polls back off from spinning to yielding to
// sleeps of up to 50 µs so that an idle MN does not burn a core that CNs
// share.
//
// Over shm, a sender holds the region's lock while it copies a READ or
// WRITE (process_vm_writev, a page fault on the MN's side for every page
// written first), and a poll with commands to read spins on it meanwhile:
// during a load that spinning was 40% of the MNs' CPU, on cores the CNs
// share (kron:24, perf). So a poll that would find the lock taken yields
// instead, for up to SKIP_LOCKED_NS in a row; past that the lock may be a
// dead sender's, and the progress polls (and spins) as before, which is
// the evidence unlock.go takes it back on.
#define SKIP_LOCKED_NS 20000000L
int dmg_mn_progress(dmg_mn *m) {
	struct fi_cq_entry ent[16];
	int idle = 0;
	int64_t locked_since = 0;
	if (pthread_getcpuclockid(pthread_self(), &m->pclock) == 0)
		__atomic_store_n(&m->pclock_ok, 1, __ATOMIC_RELEASE);
	while (!m->stop) {
		if (m->paused) { nap(1000000); continue; }
		if (m->head && word_taken((volatile int *)&m->head->lock)) {
			int64_t t = now_ns();
			if (!locked_since) locked_since = t;
			if (t - locked_since < SKIP_LOCKED_NS) { sched_yield(); continue; }
		} else {
			locked_since = 0;
		}
		if (m->blocking) {
			ssize_t n = fi_cq_sread(m->cq, ent, 16, NULL, 2);
			if (n == -FI_EAVAIL) {
				struct fi_cq_err_entry e = {0};
				fi_cq_readerr(m->cq, &e, 0);
			} else if (n < 0 && n != -FI_EAGAIN && n != -FI_ETIMEDOUT && n != -FI_EINTR) {
				m->blocking = 0; // no usable wait object: poll instead
			}
			continue;
		}
		pthread_mutex_lock(&m->calls);
		int64_t t0 = now_ns();
		__atomic_store_n(&m->inside, t0, __ATOMIC_RELEASE);
		ssize_t n = fi_cq_read(m->cq, ent, 16);
		__atomic_store_n(&m->inside, 0, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&m->calls);
		if (n == -FI_EAVAIL) {
			struct fi_cq_err_entry e = {0};
			fi_cq_readerr(m->cq, &e, 0);
		}
		int64_t dt = now_ns() - t0;
		if (n > 0 || dt > 1500) { idle = 0; continue; }
		idle++;
		if (idle < 8) continue;
		if (idle < 32) { sched_yield(); continue; }
		long ns = 1000L << ((idle - 32) / 8 > 6 ? 6 : (idle - 32) / 8);
		nap(ns > 50000 ? 50000 : ns);
	}
	return 0;
}

void dmg_mn_stop(dmg_mn *m) {
	m->stop = 1;
	__sync_synchronize();
	if (m->blocking) fi_cq_signal(m->cq); // wake a sleeping fi_cq_sread
}
// dmg_mn_forget frees the slot of a departed client endpoint, by its shm
// name, in this MN's peer map (reclaim.go): inserting a name the provider
// already maps returns its slot, and removing that address frees it and
// unmaps the client's region. It waits for progress to be between calls
// (libfabric 1.17's shm changes the map under its own lock, but a command
// being processed reads a slot outside it), 100 ms at most. Returns 0, or
// a negative libfabric error (-FI_EAGAIN: progress did not stop).
int dmg_mn_forget(dmg_mn *m, const char *name) {
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += 100000000;
	if (until.tv_nsec >= 1000000000) { until.tv_sec++; until.tv_nsec -= 1000000000; }
	if (pthread_mutex_timedlock(&m->calls, &until)) return -FI_EAGAIN; // progress busy or stuck
	fi_addr_t a = FI_ADDR_NOTAVAIL;
	int ret = fi_av_insert(m->av, name, 1, &a, 0, NULL);
	if (ret == 1) ret = fi_av_remove(m->av, &a, 1, 0);
	else if (ret >= 0) ret = -FI_EINVAL;
	pthread_mutex_unlock(&m->calls);
	return ret;
}
int64_t dmg_mn_inside(dmg_mn *m) {
	int64_t t0 = __atomic_load_n(&m->inside, __ATOMIC_ACQUIRE);
	return t0 ? now_ns() - t0 : 0;
}

int64_t dmg_mn_inside_since(dmg_mn *m) { return __atomic_load_n(&m->inside, __ATOMIC_ACQUIRE); }

static int64_t cpu_ns(clockid_t c) {
	struct timespec ts;
	if (clock_gettime(c, &ts)) return -1;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t dmg_mn_progress_cpu(dmg_mn *m) {
	return __atomic_load_n(&m->pclock_ok, __ATOMIC_ACQUIRE) ? cpu_ns(m->pclock) : -1;
}

int dmg_mn_locked(dmg_mn *m) { return m->head ? head_locked(m->head) : -1; }

// cpu_relax is a spin loop's pause.
static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

// dmg_mn_lock_wait tries to take this MN's region lock, as its progress
// would (spinning), until this thread has spent limit_ns of its own CPU
// on it or wall_ns have passed, and gives it back at once when it gets it.
// It returns the CPU it spent (-1: no region to try) and sets *released
// when the lock was free or given back at some point: the lock word of
// glibc's x86-64 spin lock rises only on an unlock (to 1; a locker
// counts it down), so a rise is a holder alive. Spun CPU, not time
// passed, is the evidence: on cores shared with busy compute nodes a
// thread may wait for a core longer than a live holder keeps the lock.
int64_t dmg_mn_lock_wait(dmg_mn *m, int64_t limit_ns, int64_t wall_ns, int *released) {
	*released = 0;
	if (!m->head) return -1;
	volatile int *word = (volatile int *)&m->head->lock;
	int64_t c0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID), w0 = now_ns();
	int last = *word;
	for (;;) {
		for (int i = 0; i < 1024; i++) {
			int got = pthread_spin_trylock(&m->head->lock) == 0;
			if (got) pthread_spin_unlock(&m->head->lock);
			int v = *word;
			if (got || v > last) {
				*released = 1;
				return cpu_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
			}
			last = v;
			cpu_relax();
		}
		int64_t spun = cpu_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		if (spun >= limit_ns || now_ns() - w0 >= wall_ns) return spun;
	}
}

// dmg_mn_unlock frees this MN's region lock for a holder that died in it,
// with pthread_spin_unlock: a spin lock has no owner, so any process that
// maps it may.
void dmg_mn_unlock(dmg_mn *m) {
	if (m->head) pthread_spin_unlock(&m->head->lock);
}

void dmg_mn_pause(dmg_mn *m, int paused) { m->paused = paused; __sync_synchronize(); }

void dmg_mn_close(dmg_mn *m) {
	if (!m) return;
	if (m->ep) fi_close(&m->ep->fid);
	if (m->mr) fi_close(&m->mr->fid);
	if (m->av) fi_close(&m->av->fid);
	if (m->cq) fi_close(&m->cq->fid);
	if (m->pool) munmap(m->pool, m->maplen);
	if (m->head) munmap(m->head, 4096);
	free(m);
}

int dmg_ep_open(dmg_fab *f, const void *names, size_t namelen, int npeers, uint64_t stagekey,
		dmg_ep **out, char *err, size_t errlen) {
	dmg_ep *e = calloc(1, sizeof *e);
	if (!e) return -FI_ENOMEM;
	e->f = f;
	int ret = open_ep(f, 0, &e->ep, &e->cq, &e->av, err, errlen);
	if (ret) { dmg_ep_close(e); return ret; }
	e->npeers = npeers;
	e->peers = calloc(npeers ? npeers : 1, sizeof(fi_addr_t));
	if (!e->peers) { dmg_ep_close(e); return -FI_ENOMEM; }
	(void)namelen;
	// Enable first: shm maps peers into the endpoint's region on insert.
	ret = fi_enable(e->ep);
	if (ret) { seterr(err, errlen, "fi_enable", ret); dmg_ep_close(e); return ret; }
	ret = fi_av_insert(e->av, names, npeers, e->peers, 0, NULL);
	if (ret != npeers) {
		seterr(err, errlen, "fi_av_insert", ret < 0 ? ret : -FI_EINVAL);
		dmg_ep_close(e);
		return ret < 0 ? ret : -FI_EINVAL;
	}
	ret = dmg_ep_reserve(e, 64 << 10, 256, stagekey, err, errlen);
	if (ret) { dmg_ep_close(e); return ret; }
	*out = e;
	return 0;
}

int dmg_ep_reserve(dmg_ep *e, uint64_t n, int nops, uint64_t newkey, char *err, size_t errlen) {
	if (n > e->stagelen) {
		uint64_t len = e->stagelen ? e->stagelen : 4096;
		while (len < n) len *= 2;
		char *s = alloc_buf(len);
		if (!s) return -FI_ENOMEM;
		if (e->stage) memcpy(s, e->stage, e->stagelen);
		struct fid_mr *mr = NULL;
		int ret = reg(e->f, e->ep, s, len, FI_READ | FI_WRITE, newkey, &mr, err, errlen);
		if (ret) { if (mr) fi_close(&mr->fid); free(s); return ret; }
		if (e->mr) fi_close(&e->mr->fid);
		free(e->stage);
		e->stage = s;
		e->stagelen = len;
		e->mr = mr;
		e->desc = fi_mr_desc(mr);
	}
	if (nops > e->nops) {
		int cap = e->nops ? e->nops : 64;
		while (cap < nops) cap *= 2;
		dmg_op *ops = realloc(e->ops, cap * sizeof *ops);
		if (!ops) return -FI_ENOMEM;
		e->ops = ops;
		struct fi_context2 *ctx = realloc(e->ctx, cap * sizeof *ctx);
		if (!ctx) return -FI_ENOMEM;
		e->ctx = ctx;
		uint8_t *done = realloc(e->done, cap);
		if (!done) return -FI_ENOMEM;
		e->done = done;
		e->nops = cap;
	}
	return 0;
}

int dmg_ep_buf_alloc(dmg_ep *e, uint64_t len, uint64_t key, void **out, int *id, char *err, size_t errlen) {
	int slot = 0;
	while (slot < e->nbufs && e->bufs[slot].p) slot++;
	if (slot == e->nbufs) {
		if (slot >= 65535) { snprintf(err, errlen, "too many registered buffers"); return -FI_ENOMEM; }
		dmg_buf *b = realloc(e->bufs, (slot + 1) * sizeof *b);
		if (!b) return -FI_ENOMEM;
		e->bufs = b;
		e->bufs[slot].p = NULL;
		e->nbufs = slot + 1;
	}
	char *p = alloc_buf(len);
	if (!p) return -FI_ENOMEM;
	struct fid_mr *mr = NULL;
	int ret = reg(e->f, e->ep, p, len ? len : 1, FI_READ | FI_WRITE, key, &mr, err, errlen);
	if (ret) { if (mr) fi_close(&mr->fid); free(p); return ret; }
	e->bufs[slot] = (dmg_buf){p, len, mr, fi_mr_desc(mr)};
	*out = p;
	*id = slot + 1;
	return 0;
}

void dmg_ep_buf_free(dmg_ep *e, int id) {
	if (id < 1 || id > e->nbufs || !e->bufs[id - 1].p) return;
	dmg_buf *b = &e->bufs[id - 1];
	fi_close(&b->mr->fid);
	free(b->p);
	b->p = NULL;
}

void *dmg_ep_stage(dmg_ep *e) { return e->stage; }
uint64_t dmg_ep_stagelen(dmg_ep *e) { return e->stagelen; }
int dmg_ep_nops(dmg_ep *e) { return e->nops; }
dmg_op *dmg_ep_ops(dmg_ep *e) { return e->ops; }

static ssize_t post(dmg_ep *e, int i) {
	dmg_op *o = &e->ops[i];
	void *ctx = &e->ctx[i];
	uint64_t flags = FI_COMPLETION | (o->more ? FI_MORE : 0);
	fi_addr_t dst = e->peers[o->peer];
	void *desc = e->desc;
	char *base = e->stage;
	if (o->buf) {
		base = e->bufs[o->buf - 1].p;
		desc = e->bufs[o->buf - 1].desc;
	}
	switch (o->kind) {
	case DMG_READ:
	case DMG_WRITE: {
		struct iovec iov = {base + o->loff, o->len};
		struct fi_rma_iov rma = {o->raddr, o->len, o->key};
		struct fi_msg_rma msg = {&iov, &desc, 1, dst, &rma, 1, ctx, 0};
		if (o->kind == DMG_READ) return fi_readmsg(e->ep, &msg, flags);
		// Delivery complete: when Flush returns, the data is in the MN's
		// memory, visible to the MN and to every later READ (transmit
		// complete only promises the peer's provider has it; tcp;ofi_rxm
		// then still needs the MN to progress).
		return fi_writemsg(e->ep, &msg, flags | e->f->write_flags);
	}
	case DMG_FAA:
	case DMG_CAS: {
		struct fi_ioc ioc = {e->stage + o->ooff, 1};
		struct fi_rma_ioc rioc = {o->raddr, 1, o->key};
		struct fi_ioc res = {e->stage + o->loff, 1};
		void *rdesc = e->desc;
		struct fi_msg_atomic msg = {&ioc, &desc, 1, dst, &rioc, 1, FI_UINT64,
					    o->kind == DMG_FAA ? FI_SUM : FI_CSWAP, ctx, 0};
		if (o->kind == DMG_FAA) return fi_fetch_atomicmsg(e->ep, &msg, &res, &rdesc, 1, flags);
		struct fi_ioc cmp = {e->stage + o->coff, 1};
		void *cdesc = e->desc;
		return fi_compare_atomicmsg(e->ep, &msg, &cmp, &cdesc, 1, &res, &rdesc, 1, flags);
	}
	}
	return -FI_EINVAL;
}

// reap reads completions; returns how many ops completed, or a negative
// error with *bad set.
static int reap(dmg_ep *e, int n, int *bad, char *err, size_t errlen) {
	struct fi_cq_entry ent[32];
	ssize_t got = fi_cq_read(e->cq, ent, 32);
	if (got == -FI_EAGAIN) return 0;
	if (got == -FI_EAVAIL) {
		struct fi_cq_err_entry ee = {0};
		char pbuf[256] = {0};
		ee.err_data_size = 0;
		if (fi_cq_readerr(e->cq, &ee, 0) < 0) {
			snprintf(err, errlen, "fi_cq_readerr failed");
			*bad = -1;
			return -FI_EIO;
		}
		*bad = -1;
		if (ee.op_context) {
			long i = (struct fi_context2 *)ee.op_context - e->ctx;
			if (i >= 0 && i < n) *bad = (int)i;
		}
		const char *ps = fi_cq_strerror(e->cq, ee.prov_errno, ee.err_data, pbuf, sizeof pbuf);
		snprintf(err, errlen, "completion error: %s (provider: %s)", fi_strerror(ee.err), ps ? ps : "?");
		return ee.err ? -ee.err : -FI_EIO;
	}
	if (got < 0) {
		seterr(err, errlen, "fi_cq_read", (int)got);
		*bad = -1;
		return (int)got;
	}
	int c = 0;
	for (ssize_t k = 0; k < got; k++) {
		long i = (struct fi_context2 *)ent[k].op_context - e->ctx;
		if (i >= 0 && i < n && !e->done[i]) { e->done[i] = 1; c++; }
	}
	return c;
}

static int first_undone(dmg_ep *e, int n) {
	for (int i = 0; i < n; i++) if (!e->done[i]) return i;
	return -1;
}

int dmg_ep_post(dmg_ep *e, int from, int to, int64_t timeout_ns, int *bad, char *err, size_t errlen) {
	if (from < 0 || to < from || to > e->nops) { *bad = -1; snprintf(err, errlen, "bad op range [%d,%d)", from, to); return -FI_EINVAL; }
	if (from == 0) { e->completed = 0; e->posted = 0; }
	int64_t deadline = now_ns() + timeout_ns;
	int polls = 0;
	for (int i = from; i < to; ) {
		if (halted(e)) return halt_error(i, bad, err, errlen);
		e->done[i] = 0;
		ssize_t ret = post(e, i);
		if (ret == 0) { i++; e->posted = i; continue; }
		if (ret != -FI_EAGAIN) {
			*bad = i;
			seterr(err, errlen, "posting", (int)ret);
			return (int)ret;
		}
		// Queue full: progress and retry.
		int c = reap(e, e->posted, bad, err, errlen);
		if (c < 0) return c;
		e->completed += c;
		if ((++polls & 63) == 0) {
			if (now_ns() > deadline) {
				*bad = i;
				snprintf(err, errlen, "timed out posting (transmit queue full)");
				return -FI_ETIMEDOUT;
			}
			sched_yield();
		}
	}
	return 0;
}

int dmg_ep_wait(dmg_ep *e, int n, int64_t timeout_ns, int *bad, char *err, size_t errlen) {
	if (n != e->posted) { *bad = -1; snprintf(err, errlen, "waiting for %d ops but %d posted", n, e->posted); return -FI_EINVAL; }
	int64_t deadline = now_ns() + timeout_ns;
	int idle = 0;
	while (e->completed < n) {
		if (halted(e)) return halt_error(first_undone(e, n), bad, err, errlen);
		int c = reap(e, n, bad, err, errlen);
		if (c < 0) return c;
		if (c > 0) { e->completed += c; idle = 0; continue; }
		idle++;
		if ((idle & 63) == 0 && now_ns() > deadline) {
			*bad = first_undone(e, n);
			snprintf(err, errlen, "timed out waiting for %d of %d completions", n - e->completed, n);
			return -FI_ETIMEDOUT;
		}
		// Spin briefly, then yield, then nap: on shared cores the MN we
		// wait for needs the CPU more than we do.
		if (idle < 32) continue;
		if (idle < 256) { sched_yield(); continue; }
		nap(idle < 2048 ? 1000 : 10000);
	}
	return 0;
}

int dmg_ep_run(dmg_ep *e, int n, int64_t timeout_ns, int *bad, char *err, size_t errlen) {
	int ret = dmg_ep_post(e, 0, n, timeout_ns, bad, err, errlen);
	if (ret) return ret;
	return dmg_ep_wait(e, n, timeout_ns, bad, err, errlen);
}

void dmg_ep_abandon(dmg_ep *e) {
	if (e && e->ep) fi_close(&e->ep->fid);
}

void dmg_ep_close(dmg_ep *e) {
	if (!e) return;
	if (e->ep) fi_close(&e->ep->fid);
	if (e->mr) fi_close(&e->mr->fid);
	for (int i = 1; i <= e->nbufs; i++) dmg_ep_buf_free(e, i);
	free(e->bufs);
	if (e->av) fi_close(&e->av->fid);
	if (e->cq) fi_close(&e->cq->fid);
	free(e->peers);
	free(e->stage);
	free(e->ops);
	free(e->ctx);
	free(e->done);
	free(e);
}
