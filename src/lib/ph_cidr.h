/* ph_cidr.h: IPv4 and IPv6 networks written as ADDR/BITS (or a bare
 * address), and whether an address is inside one. */
#ifndef PH_CIDR_H
#define PH_CIDR_H
#include "first.h"

struct ph_cidr {
	int family;              /* AF_INET or AF_INET6 */
	unsigned char addr[16];
	int bits;
};

/* Parses "10.0.0.0/8", "::1/128", "127.0.0.1" (a bare address is /32 or
 * /128). Returns 0, or -1 when s is not a network (host bits may be set:
 * they are ignored). */
int ph_cidr_parse(const char *s, struct ph_cidr *out);
/* True when the textual address a (as REMOTE_ADDR holds it) is in n; an
 * IPv4-mapped IPv6 address counts as its IPv4 address. */
bool ph_cidr_contains(const struct ph_cidr *n, const char *a);
#endif
