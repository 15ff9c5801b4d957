/* ph_http_ossl.h: the OpenSSL engine's parts that tests reach directly: the
 * exchange over a BIO (tests/fuzz/fuzz_http.c feeds it answers) and, in a
 * build whose engine is libcurl, the whole request under another name
 * (tests/http_get.c runs it under valgrind). */
#ifndef PH_HTTP_OSSL_H
#define PH_HTTP_OSSL_H
#include "first.h"
#include "ph_http.h"
#include <openssl/bio.h>
#include <stdint.h>

/* Sends rq (path and "host:port" already taken from its URL) through w
 * and reads the answer from r (the same BIO but in the fuzz harness), whose
 * socket is fd (polled when they must wait; -1: nothing to poll): its head
 * into h, its body into out (appended; not NUL-ended) by until (monotonic
 * us). Returns 0 whatever the status, or -1 with err. */
int ph_http_ossl_exchange(BIO *w, BIO *r, int fd, const struct ph_http_req *rq, const char *hostport, const char *path,
			  int64_t until, struct ph_http_head *h, struct ph_buf *out, char *err, size_t esz);
#ifndef PH_HTTP_OSSL
int ph_http_ossl_do(const struct ph_http_req *rq, struct ph_buf *out, char *err, size_t esz);
int ph_http_ossl_send(const struct ph_http_req *rq, struct ph_http_ans *an, struct ph_buf *out, char *err, size_t esz);
#endif
#endif
