/* ph_shared.c: counters shared by the master and its workers.
 *
 * Listen streams: the total bounds them (subscriptions.max_streams), and
 * each process that holds some counts them in its own cell (its owner
 * number: the hub, or a worker's slot in the master), so that the master
 * gives back what a process held when it dies, however it died. A stream
 * being handed to the hub is in the total and in no cell until the hub
 * takes it, so a hub that restarts and adopts it counts it once. A process
 * without an owner number (a single process: the mapping is its own and
 * ends with it) counts in the total only. */
#include "first.h"
#include "ph_shared.h"
#include "ph_hubmsg.h"
#include "ph_json.h"
#include "ph_log.h"
#include "ph_shm.h"
#include "ph_util.h"
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* A worker's place in the pool's scoreboard, by its owner number. */
struct pool_cell {
	int open;         /* a worker of the current generation holds it (the master says) */
	int busy;         /* it serves a request (the worker says) */
	int64_t since_us; /* when busy last changed, or the worker started */
};

struct shared {
	uint64_t changes[4]; /* indexed by enum ph_kind */
	int listeners;
	int held[PH_SHARED_OWNERS]; /* listen streams each owner holds */
	struct ph_shm_metrics metrics;
	struct ph_shm_rate rate;
	int verify[PH_SHARED_VERIFY_MAX]; /* pid verifying a token, 0: free */
	struct {
		int cells;      /* owners 1..cells are the master's workers */
		int wake_below; /* fewer idle than this: a worker wakes the master (0: never) */
		int woken;      /* a worker has woken it since it last looked */
		struct pool_cell cell[PH_SHARED_OWNERS];
	} pool;
	struct ph_shm_auth auth;
	struct {
		int state;        /* PH_SHARED_CLUSTER_UP or _DOWN, 0: not yet known */
		int64_t retry_us; /* no try before this (ph_now_us), 0: any time */
		int64_t backoff_ms;
	} cluster;
};

/* A digest may sit in AUTH_PROBE slots from the one its first bytes name
 * (the digest is keyed by a secret, so its bits say nothing of a token). */
#define AUTH_PROBE 4

volatile sig_atomic_t ph_stop_requested;
volatile sig_atomic_t ph_reload_requested;
volatile long long *ph_served_counter;
static char host_tag[9];

static struct shared local_fallback;
static struct shared *sh;
static int owner = -1; /* this process's cell in held[], -1: none */

void
ph_shared_init(void)
{
	void *p;
	if (sh != NULL)
		return;
	p = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	sh = p == MAP_FAILED ? &local_fallback : p;
	ph_shm_lock_init(&sh->rate.lock);
	ph_shm_lock_init(&sh->auth.lock);
	if (host_tag[0] == '\0') {
		unsigned char rnd[4] = {0};
		if (sodium_init() >= 0)
			randombytes_buf(rnd, sizeof rnd);
		sodium_bin2hex(host_tag, sizeof host_tag, rnd, sizeof rnd);
	}
}

static struct shared *
get(void)
{
	if (sh == NULL)
		ph_shared_init();
	return sh;
}

const char *
ph_shared_host_tag(void)
{
	get();
	return host_tag;
}

struct ph_shm_metrics *
ph_shm_metrics(void)
{
	return &get()->metrics;
}

struct ph_shm_rate *
ph_shm_rate(void)
{
	return &get()->rate;
}

struct ph_shm_auth *
ph_shm_auth(void)
{
	return &get()->auth;
}

void
ph_shm_lock_init(struct ph_shm_lock *l)
{
	pthread_mutexattr_t a;
	if (pthread_mutexattr_init(&a) != 0 || pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED) != 0 ||
	    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST) != 0 || pthread_mutex_init(&l->m, &a) != 0) {
		ph_log("error", "cannot set up a process-shared robust mutex");
		abort(); /* nothing can share counters without it */
	}
	pthread_mutexattr_destroy(&a);
}

bool
ph_shm_lock_take(struct ph_shm_lock *l)
{
	int rc = pthread_mutex_lock(&l->m);
	if (rc == EOWNERDEAD) {
		/* the holder died inside: the taker resets the table, so the
		 * state is consistent again once it gives the lock back */
		pthread_mutex_consistent(&l->m);
		return true;
	}
	if (rc != 0) { /* ENOTRECOVERABLE cannot happen: every taker makes it consistent */
		ph_log("error", "a shared lock failed: %s", strerror(rc));
		abort();
	}
	return false;
}

void
ph_shm_lock_give(struct ph_shm_lock *l)
{
	pthread_mutex_unlock(&l->m);
}

int
ph_shared_listeners(void)
{
	return __atomic_load_n(&get()->listeners, __ATOMIC_SEQ_CST);
}

void
ph_shared_changed(enum ph_kind kind)
{
	__atomic_add_fetch(&get()->changes[kind], 1, __ATOMIC_SEQ_CST);
}

uint64_t
ph_shared_changes(enum ph_kind kind)
{
	return __atomic_load_n(&get()->changes[kind], __ATOMIC_SEQ_CST);
}

void
ph_shared_set_owner(int n)
{
	owner = n >= 0 && n < PH_SHARED_OWNERS ? n : -1;
}

/* Adds d to this process's cell, never below 0. */
static void
held_add(int d)
{
	int *c, n;
	if (owner < 0)
		return;
	c = &get()->held[owner];
	n = __atomic_load_n(c, __ATOMIC_SEQ_CST);
	while (n + d >= 0 && !__atomic_compare_exchange_n(c, &n, n + d, false, __ATOMIC_SEQ_CST,
							  __ATOMIC_SEQ_CST))
		;
}

/* Takes up to n from the total, never below 0. */
static void
total_sub(int n)
{
	int *c = &get()->listeners;
	int v = __atomic_load_n(c, __ATOMIC_SEQ_CST);
	while (v > 0 && !__atomic_compare_exchange_n(c, &v, v > n ? v - n : 0, false, __ATOMIC_SEQ_CST,
						     __ATOMIC_SEQ_CST))
		;
}

bool
ph_shared_listener_enter(long long max)
{
	int n;
	/* the cell first: a process killed in between is then undercounted
	 * for a moment, never leaks a slot for good */
	held_add(1);
	n = __atomic_add_fetch(&get()->listeners, 1, __ATOMIC_SEQ_CST);
	if (n > max) {
		total_sub(1);
		held_add(-1);
		return false;
	}
	return true;
}

void
ph_shared_listener_leave(void)
{
	held_add(-1);
	total_sub(1);
}

/* True when a verification slot holding pid may be taken: empty, or its
 * process is gone (EPERM means it exists under another user). */
static bool
slot_free(int pid)
{
	return pid == 0 || (kill((pid_t)pid, 0) != 0 && errno == ESRCH);
}

int
ph_shared_verify_enter(long long max)
{
	int self = (int)getpid();
	for (long long i = 0; i < max && i < PH_SHARED_VERIFY_MAX; i++) {
		int *s = &get()->verify[i];
		int cur = __atomic_load_n(s, __ATOMIC_SEQ_CST);
		if (slot_free(cur) &&
		    __atomic_compare_exchange_n(s, &cur, self, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			return (int)i;
	}
	return -1;
}

void
ph_shared_verify_leave(int slot)
{
	if (slot >= 0 && slot < PH_SHARED_VERIFY_MAX)
		__atomic_store_n(&get()->verify[slot], 0, __ATOMIC_SEQ_CST);
}

/* Takes the lock of the token cache; a holder that died may have left a
 * slot half-written (a digest with another entry's number), so the cache
 * starts empty again: the next requests verify their tokens anew. */
static void
auth_lock(void)
{
	struct ph_shm_auth *a = &get()->auth;
	if (ph_shm_lock_take(&a->lock)) {
		memset(a->slot, 0, sizeof a->slot);
		ph_log("warning", "a process died holding the lock of the verified-token cache: the cache "
		       "is emptied");
	}
}

static void
auth_unlock(void)
{
	ph_shm_lock_give(&get()->auth.lock);
}

static size_t
auth_home(const unsigned char *d)
{
	return ((size_t)d[0] | (size_t)d[1] << 8) % PH_SHARED_AUTH_SLOTS;
}

void
ph_shared_auth_put(const unsigned char *digest, size_t token)
{
	size_t home = auth_home(digest), pick = (home + digest[2] % AUTH_PROBE) % PH_SHARED_AUTH_SLOTS;
	auth_lock();
	for (size_t i = 0; i < AUTH_PROBE; i++) {
		struct ph_shm_auth_slot *s = &get()->auth.slot[(home + i) % PH_SHARED_AUTH_SLOTS];
		if (!s->used || memcmp(s->digest, digest, PH_SHARED_DIGEST) == 0) {
			pick = (home + i) % PH_SHARED_AUTH_SLOTS;
			break;
		}
	}
	memcpy(get()->auth.slot[pick].digest, digest, PH_SHARED_DIGEST);
	get()->auth.slot[pick].token = (long)token;
	get()->auth.slot[pick].used = true;
	auth_unlock();
}

long
ph_shared_auth_get(const unsigned char *digest)
{
	size_t home = auth_home(digest);
	long found = -1;
	auth_lock();
	for (size_t i = 0; i < AUTH_PROBE; i++) {
		struct ph_shm_auth_slot *s = &get()->auth.slot[(home + i) % PH_SHARED_AUTH_SLOTS];
		/* as ph_auth_sha256_find: eq is 1 or 0, selected without a branch */
		long eq = (long)(sodium_memcmp(s->digest, digest, PH_SHARED_DIGEST) + 1) & (long)s->used;
		long mask = -eq;
		found = (found & ~mask) | (s->token & mask);
	}
	auth_unlock();
	return found;
}

void
ph_shared_listener_give(void)
{
	held_add(-1);
}

void
ph_shared_listener_take(void)
{
	held_add(1);
}

int
ph_shared_listeners_release(int n)
{
	int had;
	if (n < 0 || n >= PH_SHARED_OWNERS)
		return 0;
	had = __atomic_exchange_n(&get()->held[n], 0, __ATOMIC_SEQ_CST);
	if (had > 0)
		total_sub(had);
	return had;
}

bool
ph_stop_pending(void)
{
	sigset_t p;
	if (ph_stop_requested || ph_reload_requested)
		return true;
	if (sigpending(&p) != 0)
		return false;
	return sigismember(&p, SIGTERM) == 1 || sigismember(&p, SIGINT) == 1 ||
	       sigismember(&p, SIGUSR1) == 1 || sigismember(&p, SIGHUP) == 1;
}

/* The datagram a message too long for one carries instead: the message is
 * in a memfd, the first descriptor attached (a NUL first: no JSON). */
static const char big_tag[] = "\0phantom-memfd";

/* A memfd holding len bytes of text, at offset 0. Returns it, or -1. */
static int
memfd_of(const char *text, size_t len)
{
	int fd = memfd_create("phantom-msg", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (ph_write_all(fd, text, len) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int
ph_send_fd(int sock, const char *text, size_t len, int fd, int wait_ms)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(2 * sizeof(int))];
	} cbuf;
	int fds[2], nfd = 0, big = -1, rc = -1;
	struct iovec iov = {(void *)text, len};
	struct msghdr mh;
	int64_t until = ph_now_us() + (int64_t)wait_ms * 1000;
	if (len > PH_HUB_MSG_MAX) {
		/* a datagram is bounded by the socket's buffer: the text goes
		 * in a memfd, which the receiver reads (ph_recv_msg) */
		if ((big = memfd_of(text, len)) < 0)
			return -1;
		fds[nfd++] = big;
		iov = (struct iovec){(void *)big_tag, sizeof big_tag};
	}
	if (fd >= 0)
		fds[nfd++] = fd;
	memset(&mh, 0, sizeof mh);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (nfd > 0) {
		struct cmsghdr *c;
		memset(&cbuf, 0, sizeof cbuf);
		mh.msg_control = cbuf.buf;
		mh.msg_controllen = CMSG_SPACE(nfd * sizeof(int));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfd * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nfd * sizeof(int));
	}
	for (;;) {
		struct pollfd p = {sock, POLLOUT, 0};
		int64_t left;
		if (sendmsg(sock, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0) {
			rc = 0;
			break;
		}
		if (errno != EINTR && errno != EAGAIN && errno != ENOBUFS)
			break;
		left = (until - ph_now_us()) / 1000;
		if (errno != EINTR && (left <= 0 || poll(&p, 1, (int)left) < 0))
			break;
	}
	if (big >= 0) {
		int e = errno;
		close(big);
		errno = e;
	}
	return rc;
}

/* Reads the message a memfd big holds (closing it) into out, when it is
 * at most max bytes. Returns its length, or -1 with errno. */
static ssize_t
read_big(int big, struct ph_buf *out, size_t max)
{
	struct stat st;
	ssize_t n = -1;
	if (fstat(big, &st) != 0)
		goto out;
	if ((size_t)st.st_size > max) {
		errno = EMSGSIZE;
		goto out;
	}
	ph_buf_reserve(out, (size_t)st.st_size + 1);
	errno = 0;
	if (pread(big, out->data, (size_t)st.st_size, 0) == st.st_size) {
		out->len = (size_t)st.st_size;
		out->data[out->len] = '\0';
		n = (ssize_t)out->len;
	} else if (errno == 0) {
		errno = EIO;
	}
out:
	{
		int e = errno;
		close(big);
		errno = e;
	}
	return n;
}

ssize_t
ph_recv_msg(int sock, struct ph_buf *out, size_t max, int *fd, int flags)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(2 * sizeof(int))];
	} cbuf;
	int fds[2] = {-1, -1}, nfd = 0;
	struct iovec iov;
	struct msghdr mh;
	struct cmsghdr *c;
	ssize_t n;
	size_t room = max < PH_HUB_MSG_MAX ? (max > sizeof big_tag ? max : sizeof big_tag) : PH_HUB_MSG_MAX;
	*fd = -1;
	out->len = 0;
	ph_buf_reserve(out, room + 1);
	iov = (struct iovec){out->data, room};
	memset(&mh, 0, sizeof mh);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf.buf;
	mh.msg_controllen = sizeof cbuf.buf;
	if ((n = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC)) < 0)
		return -1;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		size_t k = c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS
				   ? (c->cmsg_len - CMSG_LEN(0)) / sizeof(int) : 0;
		for (size_t i = 0; i < k; i++) {
			int got;
			memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof got);
			if (nfd < 2)
				fds[nfd++] = got;
			else
				close(got);
		}
	}
	if ((size_t)n == sizeof big_tag && memcmp(out->data, big_tag, sizeof big_tag) == 0 && nfd > 0) {
		*fd = fds[1];
		if ((n = read_big(fds[0], out, max)) < 0)
			return -1; /* *fd is the caller's to close */
		return n;
	}
	if (nfd > 1)
		close(fds[1]);
	*fd = fds[0];
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC) || (size_t)n > max) {
		errno = EMSGSIZE;
		return -1;
	}
	out->len = (size_t)n;
	out->data[n] = '\0';
	return n;
}

int
ph_hub_send(const char *text, size_t len, int fd, int wait_ms)
{
	if (ph_hub_fd < 0) {
		errno = EBADF;
		return -1;
	}
	return ph_send_fd(ph_hub_fd, text, len, fd, wait_ms);
}

int
ph_hub_send_json(struct json_object *m, int fd, int wait_ms)
{
	size_t len;
	const char *text = ph_json_text(m, &len);
	int rc = ph_hub_send(text, len, fd, wait_ms), e = errno;
	json_object_put(m);
	errno = e;
	return rc;
}

static int (*local_announce)(const char *uri);

void
ph_shared_local_announce(int (*fn)(const char *uri))
{
	local_announce = fn;
}

int
ph_shared_announce_updated(const char *uri)
{
	struct json_object *m;
	const char *text;
	size_t len;
	ssize_t n = -1;
	if (uri == NULL || *uri == '\0')
		return -1;
	if (ph_hub_fd < 0)
		return local_announce ? local_announce(uri) : -1;
	m = ph_hubmsg_updated(uri);
	text = json_object_to_json_string_length(m, JSON_C_TO_STRING_PLAIN, &len);
	/* no descriptor: the hub takes it as an announcement, not a stream */
	if (len <= PH_HUB_MSG_MAX)
		n = ph_hub_send(text, len, -1, 0);
	json_object_put(m);
	return n < 0 ? -1 : 0;
}

/* ---- the pool's scoreboard ------------------------------------------------------ */

#define LOAD(p) __atomic_load_n(&(p), __ATOMIC_SEQ_CST)
#define STORE(p, v) __atomic_store_n(&(p), (v), __ATOMIC_SEQ_CST)

void
ph_shared_cell_open(int n)
{
	if (n < 1 || n >= PH_SHARED_OWNERS)
		return;
	STORE(get()->pool.cell[n].busy, 0);
	STORE(get()->pool.cell[n].since_us, ph_now_us());
	STORE(get()->pool.cell[n].open, 1);
}

void
ph_shared_cell_close(int n)
{
	if (n >= 1 && n < PH_SHARED_OWNERS)
		STORE(get()->pool.cell[n].open, 0);
}

bool
ph_shared_cell_busy(int n, int64_t *since_us)
{
	struct pool_cell *c;
	if (n < 1 || n >= PH_SHARED_OWNERS)
		return false;
	c = &get()->pool.cell[n];
	if (since_us)
		*since_us = LOAD(c->since_us);
	return LOAD(c->busy) != 0;
}

void
ph_shared_pool_watch(int cells, int below)
{
	STORE(get()->pool.cells, cells < PH_SHARED_OWNERS ? cells : PH_SHARED_OWNERS - 1);
	STORE(get()->pool.wake_below, below);
}

void
ph_shared_pool_rearm(void)
{
	STORE(get()->pool.woken, 0);
}

void
ph_shared_pool_count(long long *busy, long long *idle)
{
	struct shared *s = get();
	int cells = LOAD(s->pool.cells);
	*busy = *idle = 0;
	for (int i = 1; i <= cells; i++) {
		if (!LOAD(s->pool.cell[i].open))
			continue;
		if (LOAD(s->pool.cell[i].busy))
			++*busy;
		else
			++*idle;
	}
}

bool
ph_shared_cell_retired(void)
{
	return owner >= 1 && LOAD(get()->pool.cell[owner].open) == 0;
}

void
ph_shared_cell_mark(bool busy)
{
	struct shared *s;
	long long b, idle;
	int below;
	if (owner < 1)
		return; /* not a worker under a master */
	s = get();
	STORE(s->pool.cell[owner].busy, busy ? 1 : 0);
	STORE(s->pool.cell[owner].since_us, ph_now_us());
	below = LOAD(s->pool.wake_below);
	if (!busy || below <= 0)
		return;
	/* the master sleeps until something is due: the worker that takes
	 * one of the last idle places wakes it to fork more, once until it
	 * has looked (woken) */
	ph_shared_pool_count(&b, &idle);
	if (idle < below && __atomic_exchange_n(&s->pool.woken, 1, __ATOMIC_SEQ_CST) == 0)
		kill(getppid(), SIGURG);
}

bool
ph_shared_cluster_state(int state)
{
	ph_shared_init();
	return __atomic_exchange_n(&sh->cluster.state, state, __ATOMIC_SEQ_CST) != state;
}

int64_t
ph_shared_cluster_retry_at(void)
{
	ph_shared_init();
	return __atomic_load_n(&sh->cluster.retry_us, __ATOMIC_RELAXED);
}

void
ph_shared_cluster_failed(long long max_ms)
{
	int64_t b;
	ph_shared_init();
	b = __atomic_load_n(&sh->cluster.backoff_ms, __ATOMIC_RELAXED);
	b = b < 100 ? 100 : b * 2 > max_ms ? max_ms : b * 2;
	__atomic_store_n(&sh->cluster.backoff_ms, b, __ATOMIC_RELAXED);
	__atomic_store_n(&sh->cluster.retry_us, ph_now_us() + b * 1000, __ATOMIC_RELAXED);
}

void
ph_shared_cluster_ok(void)
{
	ph_shared_init();
	__atomic_store_n(&sh->cluster.backoff_ms, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&sh->cluster.retry_us, 0, __ATOMIC_RELAXED);
}

void
ph_task_changed(const char *id)
{
	if (ph_hub_fd >= 0 && ph_hub_send_json(ph_hubmsg_task(PH_HUBMSG_TASK_CHANGED, id), -1, 200) != 0)
		ph_log("warning", "task %s: could not tell the hub it changed: %s", id, strerror(errno));
}
