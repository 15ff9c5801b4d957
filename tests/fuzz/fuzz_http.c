/* fuzz_http.c: libFuzzer harness for the answer handling of the OpenSSL
 * HTTP engine (lib/ph_http_ossl.c): the request goes nowhere, the input is
 * what the server answered (status line, headers, body), read by the
 * engine's head parser (ph_http_head) and body reader. Input: one byte
 * choosing GET or POST and the size cap (64 bytes to 8 KiB), then the
 * answer. Aborts when an accepted body is larger than the cap or than its
 * Content-Length, when an answer's status is outside 200..599 or its
 * Retry-After outside -1..86400, or when a refused one has no reason. A
 * build without libssl and c-ares runs nothing. */
#include "first.h"
#include "ph_http.h"
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifdef PH_HAVE_OSSLHTTP
#ifndef PH_HTTP_OSSL
#define PH_HTTP_OSSL_TOOL 1
#include "ph_http_ossl.c"
#else
#include "ph_http_ossl.h"
#endif

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const hdr[] = {"Accept", "application/json", NULL};
	struct ph_http_req rq = {.url = "https://as.example/jwks", .hdr = hdr, .timeout_ms = 1000,
				 .content_type = "application/x-www-form-urlencoded"};
	struct ph_buf out;
	struct ph_http_head h;
	char err[300] = "";
	BIO *w, *r;
	int rc;
	if (size < 1)
		return 0;
	rq.max_bytes = (size_t)64 << (data[0] & 7);
	if (data[0] & 8) {
		rq.body = "token=abc&token_type_hint=access_token";
		rq.body_len = strlen(rq.body);
		rq.user = "client";
		rq.pass = "secret";
	}
	w = BIO_new(BIO_s_null());
	r = BIO_new_mem_buf(data + 1, (int)(size - 1));
	if (w == NULL || r == NULL)
		abort();
	ph_buf_init(&out);
	rc = ph_http_ossl_exchange(w, r, -1, &rq, "as.example:443", "/jwks", ph_now_us() + 1000000, &h, &out, err,
				   sizeof err);
	if (rc == 0 && (out.len > rq.max_bytes || (h.content_length >= 0 && out.len > (size_t)h.content_length)))
		abort();
	if (rc == 0 && (h.ans.status < 200 || h.ans.status > 599 || h.ans.retry_after_s < -1 ||
			h.ans.retry_after_s > 86400))
		abort();
	if (rc != 0 && err[0] == '\0')
		abort();
	ph_buf_free(&out);
	BIO_free(w);
	BIO_free(r);
	return 0;
}
#else
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	(void)data, (void)size;
	return 0;
}
#endif
