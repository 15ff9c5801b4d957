/* ph_listen_addr.h: the socket --listen and listen: name (HOST:PORT,
 * [ADDR]:PORT or unix:PATH), read the same way to bind it (ph_listen.c)
 * and to check it (-t, ph_conf.c), so that -t refuses what a start would
 * refuse before it binds. */
#ifndef PH_LISTEN_ADDR_H
#define PH_LISTEN_ADDR_H
#include "first.h"

struct ph_listen_addr {
	const char *path; /* unix:PATH: the path, borrowed from the spec; else NULL */
	char host[256];   /* HOST or ADDR without its brackets; "" for every address */
	char port[6];     /* 1 to 65535, digits only */
};

/* Reads spec into *a. Returns 0, or -1 with the reason in errbuf: not one
 * of the three forms, a port that is not 1 to 65535 in digits, a host or a
 * unix path too long, and in the static build (no name lookups) a host
 * that is not a numeric address. */
int ph_listen_addr_parse(const char *spec, struct ph_listen_addr *a, char *errbuf, size_t errsz) PH_WUR;

/* What listen_mode, listen_owner and listen_group ask of a unix socket the
 * server binds itself; -1 in a field leaves that as it comes (the mode
 * from the umask, the owner and group of the process). */
struct ph_listen_perm {
	int mode;           /* 0 to 0777 */
	long long uid, gid; /* 0 to 4294967294 */
};
/* Whether p asks for anything. */
bool ph_listen_perm_any(const struct ph_listen_perm *p);
/* Reads an octal mode, 0 to 0777 ("0660" or "660", as chmod takes it) into
 * *mode. Returns 0, or -1 with the reason in errbuf. */
int ph_listen_mode_parse(const char *s, int *mode, char *errbuf, size_t errsz) PH_WUR;
/* Reads a user (group false) or a group (true), a number or a name looked
 * up in the system's databases, into *id. Returns 0, or -1 with the reason
 * in errbuf: no such user or group, and in the static build (no NSS) any
 * name. */
int ph_listen_id_parse(const char *s, bool group, long long *id, char *errbuf, size_t errsz) PH_WUR;
#endif
