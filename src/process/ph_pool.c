/* ph_pool.c: the pool policy (see ph_pool.h). Forks are rate-limited as
 * php-fpm's are: spawn_rate in the first second of demand, the allowance
 * doubling for each following second that used all of it, up to
 * max_spawn_rate, and back to spawn_rate after a second without a fork.
 * What demand is: a connection waiting with no worker idle (as many forks
 * as connections wait, where the kernel tells the queue), and in dynamic
 * mode fewer idle workers than min_idle. */
#include "first.h"
#include "ph_pool.h"
#include "ph_log.h"
#include "ph_metrics.h"
#include "ph_util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SECOND 1000000

void
ph_pool_init(struct ph_pool *p, const struct ph_pool_conf *c, long long static_n, int64_t now)
{
	memset(p, 0, sizeof *p);
	p->c = *c;
	if (static_n > 0) {
		p->c.mode = PH_POOL_STATIC;
		p->c.max = static_n;
	}
	if (p->c.mode == PH_POOL_STATIC)
		p->c.start = p->c.max;
	p->rate = p->c.spawn_rate;
	p->win_us = now;
	p->started_us = now;
}

/* Begins a new second of the fork rate when the last one is over. */
static void
roll(struct ph_pool *p, int64_t now)
{
	if (now - p->win_us < SECOND)
		return;
	if (p->forked == 0)
		p->rate = p->c.spawn_rate;
	else if (p->forked >= p->rate)
		p->rate = p->rate * 2 < p->c.max_spawn_rate ? p->rate * 2 : p->c.max_spawn_rate;
	p->win_us = now;
	p->forked = 0;
}

long long
ph_pool_forks(struct ph_pool *p, const struct ph_pool_view *v, int64_t now, int64_t *wake)
{
	long long need = 0, room, budget;
	if (p->c.mode == PH_POOL_STATIC)
		return 0; /* the master keeps its slots filled */
	roll(p, now);
	if (v->idle < p->c.min_idle)
		need = p->c.min_idle - v->idle;
	if (v->waiting)
		need += v->queue > 0 ? v->queue : 1;
	room = p->c.max - v->total;
	if (need > room)
		need = room > 0 ? room : 0;
	budget = p->rate - p->forked;
	if (need > budget) {
		need = budget > 0 ? budget : 0;
		if (p->win_us + SECOND < *wake)
			*wake = p->win_us + SECOND;
	}
	return need;
}

void
ph_pool_forked(struct ph_pool *p, long long n)
{
	p->forked += n;
}

int
ph_pool_wake_below(const struct ph_pool *p, const struct ph_pool_view *v, int64_t now)
{
	if (p->c.mode == PH_POOL_STATIC || v->total >= p->c.max)
		return 0; /* nothing to fork: no need to be woken for each request */
	if (p->forked >= p->rate && now - p->win_us < SECOND)
		return 0; /* the rate allows no fork before the next second */
	return p->c.min_idle > 1 ? (int)p->c.min_idle : 1;
}

void
ph_pool_note_full(struct ph_pool *p, const struct ph_pool_view *v, int64_t now)
{
	bool full = v->total >= p->c.max && v->idle == 0 && v->waiting;
	if (full && !p->full) {
		ph_metrics_pool_full();
		if (p->full_logged_us == 0 || now - p->full_logged_us >= p->c.full_log_s * SECOND) {
			char more[64] = "";
			if (p->full_quiet > 0)
				snprintf(more, sizeof more, " (%lld more times since the last such line)",
					 p->full_quiet);
			ph_log("warning", "pool reached its maximum of %lld workers (workers.max); requests "
			       "wait in the listen queue%s", p->c.max, more);
			p->full_logged_us = now;
			p->full_quiet = 0;
		} else {
			p->full_quiet++;
		}
	}
	p->full = full;
}

size_t
ph_pool_trim(struct ph_pool *p, const int64_t *since, size_t n, int64_t now, int64_t *wake)
{
	size_t keep, ends = 0, i;
	int64_t timeout = p->c.idle_timeout_ms * 1000;
	if (p->c.mode == PH_POOL_STATIC)
		return 0;
	keep = (size_t)p->c.min_idle;
	for (i = 0; i < n && n - ends > keep; i++) {
		if (now - since[i] >= timeout) {
			ends++;
		} else if (n - ends > (size_t)p->c.max_idle && now - p->trim_us >= SECOND) {
			p->trim_us = now;
			ends++;
		} else {
			break;
		}
	}
	if (i < n && n - ends > keep) {
		if (since[i] + timeout < *wake)
			*wake = since[i] + timeout;
		if (n - ends > (size_t)p->c.max_idle && p->trim_us + SECOND < *wake)
			*wake = p->trim_us + SECOND;
	}
	return ends;
}

/* The kB figure of the line "key N kB" in file, or 0. */
static long long
kb_in(const char *file, const char *key)
{
	char line[256];
	long long v = 0;
	size_t kl = strlen(key);
	FILE *f = fopen(file, "re");
	if (f == NULL)
		return 0;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, key, kl) == 0) {
			sscanf(line + kl, "%lld", &v);
			break;
		}
	fclose(f);
	return v;
}

/* The resident memory of pid and its children, kB. */
static long long
rss_kb(pid_t pid)
{
	char path[64], buf[1024], *s, *end;
	long long kb;
	FILE *f;
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	kb = kb_in(path, "VmRSS:");
	snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return kb;
	if (fgets(buf, sizeof buf, f))
		for (s = buf;; s = end) {
			long c = strtol(s, &end, 10);
			if (end == s || c <= 0)
				break;
			snprintf(path, sizeof path, "/proc/%ld/status", c);
			kb += kb_in(path, "VmRSS:");
		}
	fclose(f);
	return kb;
}

void
ph_pool_check_memory(struct ph_pool *p, pid_t pid, int64_t now)
{
	long long rss, total;
	if (p->rss_checked || p->c.memory_percent == 0 || pid <= 0 || now - p->started_us < SECOND)
		return;
	p->rss_checked = true;
	rss = rss_kb(pid);
	total = kb_in("/proc/meminfo", "MemTotal:");
	if (rss <= 0 || total <= 0)
		return;
	if (p->c.max * rss * 100 > total * p->c.memory_percent)
		ph_log("warning", "workers.max %lld x %lld KiB (the resident memory of a worker and its "
		       "handlers) = %lld MiB is more than workers.memory_percent %lld%% of this host's "
		       "%lld MiB", p->c.max, rss, p->c.max * rss / 1024, p->c.memory_percent, total / 1024);
}

void
ph_pool_log_status(void)
{
	struct ph_pool_status st;
	char queue[64] = "unknown";
	ph_metrics_pool(&st);
	if (st.queue >= 0)
		snprintf(queue, sizeof queue, "%lld of %lld", st.queue, st.backlog);
	ph_log("notice", "pool: %lld busy, %lld idle, %lld workers of at most %lld; the maximum reached "
	       "%lld times; listen queue %s", st.busy, st.idle, st.total, st.max, st.full, queue);
}
