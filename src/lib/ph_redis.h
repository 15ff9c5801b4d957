/* ph_redis.h: a small synchronous Redis client over hiredis: one
 * connection by TCP or unix socket, AUTH and SELECT on connect, every
 * command bounded by a timeout. It knows nothing of Phantom: what is
 * stored, the key names, the backoff between tries and what is logged are
 * the caller's (ipc/ph_cluster.c).
 *
 * The address parser is here in every build, so that -t reads
 * cluster.redis the same with or without hiredis; the client itself exists
 * only with PH_HAVE_HIREDIS (elsewhere ph_redis_connect fails, saying so). */
#ifndef PH_REDIS_H
#define PH_REDIS_H
#include "first.h"
#include <stddef.h>

/* Where Redis listens: "redis://HOST[:PORT][/DB]" or "unix:PATH[?db=DB]". */
struct ph_redis_addr {
	char host[256]; /* "" for a unix socket */
	int port;       /* 6379 unless given */
	char path[108]; /* the unix socket, "" for TCP */
	int db;         /* 0 to 15 unless the server has more; SELECTed on connect when not 0 */
};

/* Reads spec into *a. Returns 0, or -1 with the reason in err: not one of
 * the two forms, a port not 1 to 65535, a db not 0 to 1000000, a host or
 * path too long, a user or password in the URL (use password_file). */
int ph_redis_addr_parse(const char *spec, struct ph_redis_addr *a, char *err, size_t n) PH_WUR;
/* The address for messages: "HOST:PORT/DB" or "unix:PATH" (no secret in it). */
void ph_redis_addr_name(const struct ph_redis_addr *a, char *out, size_t n);

/* One reply, as hiredis gives it (struct redisReply). */
struct redisReply;
struct ph_redis;

/* Connects to a within timeout_ms, then AUTH with password (NULL: none)
 * and SELECT when a->db is not 0, each within timeout_ms. Returns the
 * client (free with ph_redis_free), or NULL with the reason in err. */
struct ph_redis *ph_redis_connect(const struct ph_redis_addr *a, const char *password,
				  long long timeout_ms, char *err, size_t n);
void ph_redis_free(struct ph_redis *r);
/* Runs one command of argc arguments (argv[i] of len[i] bytes, borrowed)
 * and waits for its reply at most the timeout. Returns the reply (caller
 * frees with ph_redis_reply_free; an error reply is a reply, type 6), or
 * NULL with the reason in err after a timeout (errno ETIMEDOUT), an I/O
 * error or a protocol error (ECONNRESET): the connection is then unusable
 * (ph_redis_free it). */
struct redisReply *ph_redis_cmd(struct ph_redis *r, int argc, const char **argv, const size_t *len,
				char *err, size_t n);
void ph_redis_reply_free(struct redisReply *rep);
/* The socket of r, for a caller that must not keep it across fork. */
int ph_redis_fd(const struct ph_redis *r);
#endif
