/* ph_cluster_ops.c: the shared token buckets
 * (ph_cluster.h). */
#include "first.h"
#include "ph_cluster.h"
#include "ph_log.h"
#include "ph_util.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#ifdef PH_HAVE_HIREDIS
#include <hiredis/hiredis.h>

/* A token bucket in one hash, {t: micro-tokens, l: last refill (ms)},
 * refilled and taken from in one step (a script runs alone), expiring once
 * it would be full again. ARGV: capacity (micro-tokens), refill per ms
 * (micro-tokens), now (ms, the caller's wall clock), take (1 or 0), expiry
 * (ms). Returns the ms until a token is there, 0 when one was. */
static const char rate_script[] =
	"local cap = tonumber(ARGV[1]) local per = tonumber(ARGV[2]) local now = tonumber(ARGV[3])\n"
	"local v = redis.call('HMGET', KEYS[1], 't', 'l')\n"
	"local t = tonumber(v[1]) or cap local l = tonumber(v[2]) or now\n"
	"if now > l then t = math.min(cap, t + (now - l) * per) l = now end\n"
	"local wait = 0\n"
	"if t >= 1000000 then if ARGV[4] == '1' then t = t - 1000000 end\n"
	"else wait = math.ceil((1000000 - t) / per) end\n"
	"redis.call('HSET', KEYS[1], 't', string.format('%.0f', t), 'l', string.format('%.0f', l))\n"
	"redis.call('PEXPIRE', KEYS[1], ARGV[5])\n"
	"return wait\n";

int
ph_cluster_rate(const char *rkey, const struct ph_rate_conf *rc, int64_t now_ms, bool take,
		long long *wait_s)
{
	char key[PH_CLUSTER_KEY_MAX], a[5][32];
	const char *argv[9] = {"EVAL", rate_script, "1", key, a[0], a[1], a[2], a[3], a[4]};
	size_t len[9] = {4, sizeof rate_script - 1, 1};
	long long cap = (rc->burst > 0 ? rc->burst : rc->requests) * 1000000LL;
	double per_ms = (double)rc->requests * 1000.0 / (double)rc->per_seconds;
	struct redisReply *rep;
	int ok = -1;
	ph_cluster_key(PH_CK_RATE, rkey, strlen(rkey), key);
	len[3] = strlen(key);
	len[4] = (size_t)snprintf(a[0], sizeof a[0], "%lld", cap);
	len[5] = (size_t)snprintf(a[1], sizeof a[1], "%.6f", per_ms);
	len[6] = (size_t)snprintf(a[2], sizeof a[2], "%lld", (long long)now_ms);
	len[7] = (size_t)snprintf(a[3], sizeof a[3], "%d", take ? 1 : 0);
	/* empty buckets refill in cap / per ms: then the key says nothing */
	len[8] = (size_t)snprintf(a[4], sizeof a[4], "%lld", (long long)((double)cap / per_ms) + 1000);
	if ((rep = ph_cluster_cmd(9, argv, len)) == NULL)
		return -1;
	if (rep->type == REDIS_REPLY_INTEGER) {
		*wait_s = rep->integer <= 0 ? 0 : (rep->integer + 999) / 1000;
		ok = 0;
	} else {
		ph_log("error", "cluster: the rate script was refused: %.200s",
		       rep->type == REDIS_REPLY_ERROR ? rep->str : "an unexpected reply");
	}
	ph_redis_reply_free(rep);
	return ok;
}
#else
int
ph_cluster_rate(const char *rkey, const struct ph_rate_conf *rc, int64_t now_ms, bool take,
		long long *wait_s)
{
	(void)rkey, (void)rc, (void)now_ms, (void)take, (void)wait_s;
	return -1;
}
#endif
