/* ph_otlp_http.h: the HTTP client the exporter posts OTLP with, behind one
 * small interface so another client can back it: libcurl when the build
 * has it (--with-oauth links it), else none (ph_otlp_http_missing says
 * why, for -t and the log). */
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

/* NULL when url can be posted to by this build, else why not (static). */
const char *ph_otlp_http_missing(const char *url);
/* Posts p and fills a. Blocks for at most p->timeout_ms (the exporter is
 * a process of its own). */
void ph_otlp_http_post(const struct ph_otlp_post *p, struct ph_otlp_answer *a);
#endif
