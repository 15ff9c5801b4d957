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
#endif
