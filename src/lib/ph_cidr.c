/* ph_cidr.c: address networks for allow-lists (http.metrics.allow). */
#include "first.h"
#include "ph_cidr.h"
#include "ph_util.h"
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

/* The longest text a network can be: an IPv6 address and "/128". */
#define CIDR_TEXT_MAX (INET6_ADDRSTRLEN + 4)

/* Reads a textual address into out (16 bytes) and its family into *fam.
 * Returns 0 or -1. */
static int
parse_addr(const char *s, unsigned char *out, int *fam)
{
	memset(out, 0, 16);
	if (inet_pton(AF_INET, s, out) == 1) {
		*fam = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, out) == 1) {
		*fam = AF_INET6;
		return 0;
	}
	return -1;
}

int
ph_cidr_parse(const char *s, struct ph_cidr *out)
{
	char buf[CIDR_TEXT_MAX + 1];
	const char *slash;
	size_t n = strlen(s);
	int max;
	if (n == 0 || n > CIDR_TEXT_MAX)
		return -1;
	memcpy(buf, s, n + 1);
	slash = strchr(buf, '/');
	if (slash)
		buf[slash - buf] = '\0';
	if (parse_addr(buf, out->addr, &out->family) != 0)
		return -1;
	max = out->family == AF_INET ? 32 : 128;
	out->bits = max;
	if (slash) {
		long long bits;
		const char *err;
		if (ph_strtonum(slash + 1, 0, max, &bits, &err) != 0)
			return -1;
		out->bits = (int)bits;
	}
	return 0;
}

/* True when the first bits bits of a and b are the same. */
static bool
prefix_eq(const unsigned char *a, const unsigned char *b, int bits)
{
	int whole = bits / 8, rest = bits % 8;
	if (memcmp(a, b, (size_t)whole) != 0)
		return false;
	if (rest == 0)
		return true;
	return ((a[whole] ^ b[whole]) & (0xff << (8 - rest))) == 0;
}

bool
ph_cidr_contains(const struct ph_cidr *n, const char *a)
{
	static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	unsigned char addr[16];
	int fam;
	if (a == NULL || strlen(a) > CIDR_TEXT_MAX || parse_addr(a, addr, &fam) != 0)
		return false;
	if (fam == AF_INET6 && n->family == AF_INET && memcmp(addr, mapped, 12) == 0) {
		memmove(addr, addr + 12, 4);
		fam = AF_INET;
	}
	return fam == n->family && prefix_eq(addr, n->addr, n->bits);
}
