/* ph_otlp_http.h: the HTTP client the exporter posts OTLP with, behind one
 * small interface so another client can back it: libcurl when it is the
 * build's HTTP client (PH_HTTP_CURL), else a plain http:// client of its own
 * (https:// then needs libcurl: ph_otlp_http_missing says so, for -t). */
#ifndef PH_OTLP_HTTP_H
#define PH_OTLP_HTTP_H
#include "first.h"
#include "ph_otel.h"

struct ph_otlp_post {
	const char *url;
	const struct ph_otel_header *headers; /* secrets: never logged */
	size_t nheaders;
	const char *content_type;
	bool gzip;                  /* body is gzip: Content-Encoding: gzip */
	const void *body;
	size_t len;
	long long timeout_ms;
};

struct ph_otlp_answer {
	int status;                 /* HTTP status; 0: no answer (err says why) */
	long long retry_after_ms;   /* Retry-After in seconds, as ms; -1: none */
	char err[200];
};

/* The longest answer head read (status line and headers). */
#define PH_OTLP_HEAD_MAX 16384

/* Parses the head of an HTTP/1.x answer in buf[0, len): 1 with *status
 * (and *retry_after_ms from Retry-After in seconds, -1 without one) when
 * the head is whole, 0 when more is needed, -1 when it is not HTTP/1.x or
 * longer than PH_OTLP_HEAD_MAX. The plain client's parser (fuzz_otlp_head). */
int ph_otlp_http_head(const char *buf, size_t len, int *status, long long *retry_after_ms);

/* NULL when url can be posted to by this build, else why not (static). */
const char *ph_otlp_http_missing(const char *url);
/* Posts p and fills a. Blocks for at most p->timeout_ms (the exporter is
 * a process of its own). */
void ph_otlp_http_post(const struct ph_otlp_post *p, struct ph_otlp_answer *a);
#endif
