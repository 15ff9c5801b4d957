/* ph_redis.c: a small synchronous Redis client over hiredis (ph_redis.h). */
#include "first.h"
#include "ph_redis.h"
#include "ph_util.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef PH_HAVE_HIREDIS
#include <hiredis/hiredis.h>
#include <sys/time.h>
#endif

/* Reads "PORT[/DB]" or "/DB" after a host into a. Returns 0 or -1. */
static int
port_db(const char *p, struct ph_redis_addr *a, char *err, size_t n)
{
	long long v;
	const char *why;
	char num[16];
	const char *slash = strchr(p, '/');
	size_t len = slash ? (size_t)(slash - p) : strlen(p);
	if (*p == ':') {
		p++;
		len--;
		if (len == 0 || len >= sizeof num) {
			snprintf(err, n, "the port must be 1 to 65535");
			return -1;
		}
		memcpy(num, p, len);
		num[len] = '\0';
		if (ph_strtonum(num, 1, 65535, &v, &why) != 0) {
			snprintf(err, n, "the port '%s' is %s (1 to 65535)", num, why);
			return -1;
		}
		a->port = (int)v;
	} else if (len != 0) {
		snprintf(err, n, "expected :PORT or /DB after the host");
		return -1;
	}
	if (slash && slash[1] != '\0') {
		if (ph_strtonum(slash + 1, 0, 1000000, &v, &why) != 0) {
			snprintf(err, n, "the database '%s' is %s (0 to 1000000)", slash + 1, why);
			return -1;
		}
		a->db = (int)v;
	}
	return 0;
}

/* "redis://HOST[:PORT][/DB]"; HOST may be [IPv6]. */
static int
parse_tcp(const char *s, struct ph_redis_addr *a, char *err, size_t n)
{
	const char *end;
	size_t hl;
	if (strchr(s, '@') != NULL) {
		snprintf(err, n, "a user or password in the URL is refused (it would be logged and shown "
			 "by -t): give the password in cluster.password_file");
		return -1;
	}
	if (*s == '[') {
		if ((end = strchr(s, ']')) == NULL) {
			snprintf(err, n, "an IPv6 address lacks its ']'");
			return -1;
		}
		s++;
		hl = (size_t)(end - s);
		end++;
	} else {
		end = s + strcspn(s, ":/");
		hl = (size_t)(end - s);
	}
	if (hl == 0 || hl >= sizeof a->host) {
		snprintf(err, n, "the host is %s", hl == 0 ? "missing" : "too long");
		return -1;
	}
	memcpy(a->host, s, hl);
	a->host[hl] = '\0';
	return port_db(end, a, err, n);
}

/* "unix:PATH[?db=DB]" */
static int
parse_unix(const char *s, struct ph_redis_addr *a, char *err, size_t n)
{
	const char *q = strstr(s, "?db=");
	size_t pl = q ? (size_t)(q - s) : strlen(s);
	long long v;
	const char *why;
	if (pl == 0 || pl >= sizeof a->path || s[0] != '/') {
		snprintf(err, n, "unix:PATH needs an absolute path of at most %zu bytes", sizeof a->path - 1);
		return -1;
	}
	memcpy(a->path, s, pl);
	a->path[pl] = '\0';
	if (q && ph_strtonum(q + 4, 0, 1000000, &v, &why) != 0) {
		snprintf(err, n, "the database '%s' is %s (0 to 1000000)", q + 4, why);
		return -1;
	}
	a->db = q ? (int)v : 0;
	return 0;
}

int
ph_redis_addr_parse(const char *spec, struct ph_redis_addr *a, char *err, size_t n)
{
	memset(a, 0, sizeof *a);
	a->port = 6379;
	if (strncmp(spec, "redis://", 8) == 0)
		return parse_tcp(spec + 8, a, err, n);
	if (strncmp(spec, "unix:", 5) == 0)
		return parse_unix(spec + 5, a, err, n);
	snprintf(err, n, "'%.100s' is neither redis://HOST:PORT/DB nor unix:PATH (rediss:// and Redis "
		 "Cluster are not supported)", spec);
	return -1;
}

void
ph_redis_addr_name(const struct ph_redis_addr *a, char *out, size_t n)
{
	if (a->path[0])
		snprintf(out, n, "unix:%s", a->path);
	else
		snprintf(out, n, "%s:%d/%d", a->host, a->port, a->db);
}

#ifdef PH_HAVE_HIREDIS
struct ph_redis {
	redisContext *c;
};

static struct timeval
tv_of(long long ms)
{
	struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
	return tv;
}

/* Runs a setup command (AUTH, SELECT) that must answer +OK. */
static int
setup_cmd(struct ph_redis *r, int argc, const char **argv, const char *what, char *err, size_t n)
{
	size_t len[2];
	struct redisReply *rep;
	int rc = 0;
	for (int i = 0; i < argc; i++)
		len[i] = strlen(argv[i]);
	if ((rep = ph_redis_cmd(r, argc, argv, len, err, n)) == NULL)
		return -1;
	if (rep->type == REDIS_REPLY_ERROR) {
		/* the server's words never hold the password */
		snprintf(err, n, "%s refused: %.200s", what, rep->str);
		rc = -1;
	}
	freeReplyObject(rep);
	return rc;
}

struct ph_redis *
ph_redis_connect(const struct ph_redis_addr *a, const char *password, long long timeout_ms, char *err,
		 size_t n)
{
	struct timeval tv = tv_of(timeout_ms);
	struct ph_redis *r;
	redisContext *c = a->path[0] ? redisConnectUnixWithTimeout(a->path, tv)
				     : redisConnectWithTimeout(a->host, a->port, tv);
	char db[16];
	const char *auth[2] = {"AUTH", password}, *sel[2] = {"SELECT", db};
	if (c == NULL) {
		snprintf(err, n, "out of memory");
		return NULL;
	}
	if (c->err || redisSetTimeout(c, tv) != REDIS_OK) {
		snprintf(err, n, "connect: %s", c->err ? c->errstr : "cannot set the timeout");
		redisFree(c);
		return NULL;
	}
	r = ph_xcalloc(1, sizeof *r);
	r->c = c;
	snprintf(db, sizeof db, "%d", a->db);
	if ((password && setup_cmd(r, 2, auth, "AUTH", err, n) != 0) ||
	    (a->db != 0 && setup_cmd(r, 2, sel, "SELECT", err, n) != 0)) {
		ph_redis_free(r);
		return NULL;
	}
	return r;
}

void
ph_redis_free(struct ph_redis *r)
{
	if (r == NULL)
		return;
	redisFree(r->c);
	free(r);
}

struct redisReply *
ph_redis_cmd(struct ph_redis *r, int argc, const char **argv, const size_t *len, char *err, size_t n)
{
	struct redisReply *rep;
	if (r->c->err) {
		snprintf(err, n, "%s", r->c->errstr);
		errno = ECONNRESET;
		return NULL;
	}
	errno = 0;
	rep = redisCommandArgv(r->c, argc, argv, len);
	if (rep == NULL) {
		/* a timeout shows as an I/O error with EAGAIN */
		bool timeout = r->c->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK);
		if (timeout)
			snprintf(err, n, "no answer within the timeout");
		else
			snprintf(err, n, "%s", r->c->err ? r->c->errstr : "no reply");
		if (!r->c->err)
			r->c->err = REDIS_ERR_IO; /* never reused */
		errno = timeout ? ETIMEDOUT : ECONNRESET;
	}
	return rep;
}

void
ph_redis_reply_free(struct redisReply *rep)
{
	if (rep)
		freeReplyObject(rep);
}

int
ph_redis_fd(const struct ph_redis *r)
{
	return r->c->fd;
}
#else /* no hiredis in this build */
struct ph_redis *
ph_redis_connect(const struct ph_redis_addr *a, const char *password, long long timeout_ms, char *err,
		 size_t n)
{
	(void)a, (void)password, (void)timeout_ms;
	snprintf(err, n, "this phantom-fcgi was built without hiredis");
	return NULL;
}

void
ph_redis_free(struct ph_redis *r)
{
	(void)r;
}

struct redisReply *
ph_redis_cmd(struct ph_redis *r, int argc, const char **argv, const size_t *len, char *err, size_t n)
{
	(void)r, (void)argc, (void)argv, (void)len;
	snprintf(err, n, "this phantom-fcgi was built without hiredis");
	return NULL;
}

void
ph_redis_reply_free(struct redisReply *rep)
{
	(void)rep;
}

int
ph_redis_fd(const struct ph_redis *r)
{
	(void)r;
	return -1;
}
#endif
