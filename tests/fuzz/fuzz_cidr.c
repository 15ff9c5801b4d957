/* fuzz_cidr.c: libFuzzer harness for ph_cidr_parse and ph_cidr_contains,
 * the parser of http.metrics.allow and the check of REMOTE_ADDR. Input:
 * "NETWORK\nADDRESS". Aborts when a parsed network breaks what ph_cidr.h
 * promises (bits within the family, its own address inside it). */
#include "first.h"
#include "ph_cidr.h"
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), *nl;
	struct ph_cidr n;
	memcpy(s, data, size);
	s[size] = '\0';
	nl = strchr(s, '\n');
	if (nl)
		*nl++ = '\0';
	if (ph_cidr_parse(s, &n) == 0) {
		if (n.family != AF_INET && n.family != AF_INET6)
			abort();
		if (n.bits < 0 || n.bits > (n.family == AF_INET ? 32 : 128))
			abort();
		if (strchr(s, '/') == NULL && !ph_cidr_contains(&n, s))
			abort(); /* a bare address is inside its own /32 or /128 */
	}
	if (nl && ph_cidr_parse(s, &n) == 0)
		(void)ph_cidr_contains(&n, nl);
	free(s);
	return 0;
}
