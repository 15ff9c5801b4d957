/* fuzz_otlp_head.c: libFuzzer harness for ph_otlp_http_head, the parser of
 * a collector's answer in the plain http:// OTLP client (builds without
 * libcurl). The input is the bytes a collector sent. Aborts when the
 * parser breaks what ph_otlp_http.h promises: a whole head with a status
 * outside 100..599, a Retry-After outside 0..86400 s, a head longer than
 * PH_OTLP_HEAD_MAX taken as whole, or a different answer when the same
 * bytes come in two reads. */
#include "first.h"
#include "ph_otlp_http.h"
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int st, st2;
	long long ra, ra2;
	int rc = ph_otlp_http_head((const char *)data, size, &st, &ra);
	if (rc == 1 && (st < 100 || st > 599 || ra < -1 || ra > 86400000))
		abort();
	if (rc == 0 && size > PH_OTLP_HEAD_MAX)
		abort();
	/* the prefix never decides otherwise than the whole once whole */
	if (size > 1 && ph_otlp_http_head((const char *)data, size / 2, &st2, &ra2) == 1 &&
	    (rc != 1 || st2 != st || ra2 != ra))
		abort();
	return 0;
}
