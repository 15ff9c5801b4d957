/* http_get.c: one request through the OpenSSL engine of ph_http.h (the
 * static build's), in any build where libssl and c-ares are found: in a
 * build whose engine is libcurl that engine's source is compiled in here.
 * tests/integration/http_client.sh runs it, under valgrind when present.
 *
 *   http_get [-s] [-d BODY | -f FILE] [-T TYPE] [-H NAME=VALUE]... [-u USER:PASS]
 *            [-c CA_FILE] [-t TIMEOUT_MS] [-m MAX_BYTES] URL
 *
 * -d makes it a POST (application/x-www-form-urlencoded, or -T's type), -f
 * one of FILE's bytes; -H adds a header (at most 8). The body goes to
 * stdout; a failure's reason to stderr, exit status 1. -s takes any status
 * (ph_http_send) and writes "status N retry-after S" to stderr first. */
#include "first.h"
#include "ph_http.h"
#ifndef PH_HTTP_OSSL
#define PH_HTTP_OSSL_TOOL 1
#include "ph_http_ossl.c"
#define DO ph_http_ossl_do
#define SEND ph_http_ossl_send
#else
#define DO ph_http_do
#define SEND ph_http_send
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	const char *hdr[2 * 10 + 1] = {"Accept", "application/json", "X-Test", "http_get", NULL};
	size_t nh = 4;
	struct ph_http_req rq = {.hdr = hdr, .timeout_ms = 5000, .max_bytes = 1 << 20,
				 .content_type = "application/x-www-form-urlencoded"};
	char *file = NULL, *eq;
	size_t flen;
	struct ph_buf out;
	char err[512], *user = NULL, *colon;
	int c, rc;
	bool any = false;
	struct ph_http_ans an;
	while ((c = getopt(argc, argv, "sd:f:T:H:u:c:t:m:")) != -1) {
		switch (c) {
		case 's': any = true; break;
		case 'f':
			if (ph_read_file(optarg, 64 << 20, &file, &flen) != 0)
				return 2;
			rq.body = file, rq.body_len = flen;
			break;
		case 'T': rq.content_type = optarg; break;
		case 'H':
			if (nh >= 2 * 10 || (eq = strchr(optarg, '=')) == NULL)
				return 2;
			*eq = '\0';
			hdr[nh++] = optarg;
			hdr[nh++] = eq + 1;
			hdr[nh] = NULL;
			break;
		case 'd': rq.body = optarg, rq.body_len = strlen(optarg); break;
		case 'u': user = optarg; break;
		case 'c': rq.ca_file = optarg; break;
		case 't': rq.timeout_ms = atoll(optarg); break;
		case 'm': rq.max_bytes = (size_t)atoll(optarg); break;
		default: return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: http_get [-s] [-d BODY | -f FILE] [-T TYPE] [-H NAME=VALUE]... [-u USER:PASS] "
				"[-c CA] [-t MS] [-m BYTES] URL\n");
		return 2;
	}
	if (user != NULL && (colon = strchr(user, ':')) != NULL) {
		*colon = '\0';
		rq.user = user;
		rq.pass = colon + 1;
	}
	rq.url = argv[optind];
	rc = any ? SEND(&rq, &an, &out, err, sizeof err) : DO(&rq, &out, err, sizeof err);
	free(file);
	if (rc == 0 && any)
		fprintf(stderr, "status %d retry-after %lld\n", an.status, an.retry_after_s);
	if (rc != 0) {
		fprintf(stderr, "http_get: %s\n", err);
		return 1;
	}
	fwrite(out.data, 1, out.len, stdout);
	ph_buf_free(&out);
	return 0;
}
