/* ph_pool.h: the policy of the master's worker pool, after php-fpm's
 * process manager: how many workers to fork now (within the fork rate),
 * which idle ones to end, when the pool counts as full, and what the
 * master logs about it. The master (ph_master.c) owns the processes and
 * tells this what it sees. */
#ifndef PH_POOL_H
#define PH_POOL_H
#include "first.h"
#include "ph_config.h"
#include <sys/types.h>

struct ph_pool {
	struct ph_pool_conf c;  /* static: c.max workers, always */
	int64_t win_us;         /* the second whose forks are counted began then */
	long long forked, rate; /* forks in that second, and how many it allows */
	bool full;              /* at the maximum with a request waiting, at the last look */
	int64_t full_logged_us; /* when "pool reached its maximum" was last logged (0: never) */
	long long full_quiet;   /* times reached since then, not logged */
	int64_t trim_us;        /* when max_idle last ended a worker */
	int64_t started_us;     /* when this policy began (the memory check waits a second) */
	bool rss_checked;
};

/* What the master sees at one look at the current generation. */
struct ph_pool_view {
	long long total;  /* workers, counting slots about to be refilled */
	long long busy, idle;
	long long queue;  /* connections waiting to be accepted, where known (else 1 or 0) */
	bool waiting;     /* a connection waits while no worker is idle */
};

/* Starts the policy c (copied); static_n > 0: a static pool of that many
 * (--workers). */
void ph_pool_init(struct ph_pool *p, const struct ph_pool_conf *c, long long static_n, int64_t now);
/* The workers to fork now for v, within the fork rate; when the rate holds
 * some back, *wake is lowered to when it allows more. */
long long ph_pool_forks(struct ph_pool *p, const struct ph_pool_view *v, int64_t now, int64_t *wake);
/* Counts n forks made now against the rate. */
void ph_pool_forked(struct ph_pool *p, long long n);
/* The threshold workers wake the master at (ph_shared_pool_watch): fewer
 * idle than it, 0 when forking more is not possible now. */
int ph_pool_wake_below(const struct ph_pool *p, const struct ph_pool_view *v, int64_t now);
/* Notes whether the pool is full now (at the maximum, none idle, a
 * request waiting); a new time is counted in the metrics and logged, at
 * most once per full_log_interval_s. */
void ph_pool_note_full(struct ph_pool *p, const struct ph_pool_view *v, int64_t now);
/* Of n idle workers, idle since since[0] <= since[1] <= ..., how many of
 * the first ones end now: beyond min_idle those idle idle_timeout_ms, and
 * one a second beyond max_idle. *wake is lowered to the next such time. */
size_t ph_pool_trim(struct ph_pool *p, const int64_t *since, size_t n, int64_t now, int64_t *wake);
/* Once, a second after the start: warns when max workers of the RSS of
 * worker pid (and its children: persistent handlers) would take more than
 * memory_percent of the host's memory. */
void ph_pool_check_memory(struct ph_pool *p, pid_t pid, int64_t now);
/* Logs the pool's state (SIGUSR2), as /metrics reports it. */
void ph_pool_log_status(void);
#endif
