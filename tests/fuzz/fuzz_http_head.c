/* fuzz_http_head.c: libFuzzer harness for ph_http_head (lib/ph_http.c), the
 * OpenSSL HTTP engine's parser of an answer's head (the static build's
 * client for OAuth fetches and OTLP exports; fuzz_http runs it inside the
 * whole exchange). The input is the bytes a server sent. Aborts when the
 * parser breaks what ph_http.h promises: a whole head with a status outside
 * 100..599, a Retry-After outside -1..86400 s, a length past the input or
 * PH_HTTP_HEAD_MAX, a negative Content-Length other than -1, an input of
 * PH_HTTP_HEAD_MAX bytes still asking for more, or a different answer when
 * the same bytes come in two reads. */
#include "first.h"
#include "ph_http.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ph_http_head h, h2;
	int rc = ph_http_head((const char *)data, size, &h);
	if (rc == 1 && (h.ans.status < 100 || h.ans.status > 599 || h.ans.retry_after_s < -1 ||
			h.ans.retry_after_s > 86400 || h.len > size || h.len > PH_HTTP_HEAD_MAX ||
			h.content_length < -1 || memchr(h.reason, '\0', sizeof h.reason) == NULL))
		abort();
	if (rc == 0 && size >= PH_HTTP_HEAD_MAX)
		abort();
	/* a prefix never decides otherwise than the whole once whole */
	if (size > 1 && ph_http_head((const char *)data, size / 2, &h2) == 1 &&
	    (rc != 1 || h2.ans.status != h.ans.status || h2.ans.retry_after_s != h.ans.retry_after_s ||
	     h2.len != h.len || h2.content_length != h.content_length))
		abort();
	return 0;
}
