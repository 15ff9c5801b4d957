/* ph_otlp_http.c: OTLP/HTTP posts through libcurl (ph_otlp_http.h). */
#include "first.h"
#include "ph_otlp_http.h"
#include "ph_util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef PH_HAVE_OAUTH
#include <curl/curl.h>
#endif

const char *
ph_otlp_http_missing(const char *url)
{
	if (url == NULL)
		return NULL;
	if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
		return "the OTLP endpoint is not an http:// or https:// URL";
#ifdef PH_HAVE_OAUTH
	return NULL;
#else
	return "this build has no HTTP client for OTLP (libcurl: configure --with-oauth; the static "
	       "build leaves it out)";
#endif
}

#ifdef PH_HAVE_OAUTH
/* The answer's body is not needed: read and dropped. */
static size_t
drop_body(char *p, size_t sz, size_t n, void *u)
{
	(void)p;
	(void)u;
	return sz * n;
}

/* Retry-After in seconds (the HTTP-date form is taken as absent). */
static size_t
on_header(char *p, size_t sz, size_t n, void *u)
{
	struct ph_otlp_answer *a = u;
	size_t len = sz * n;
	if (len > 12 && strncasecmp(p, "retry-after:", 12) == 0) {
		char v[32];
		size_t vl;
		const char *t = ph_trim(p + 12, &vl);
		long long s;
		while (vl > 0 && (t[vl - 1] == '\r' || t[vl - 1] == '\n'))
			vl--;
		if (vl < sizeof v) {
			memcpy(v, t, vl);
			v[vl] = '\0';
			const char *why;
			if (ph_strtonum(v, 0, 86400, &s, &why) == 0)
				a->retry_after_ms = s * 1000;
		}
	}
	return len;
}

void
ph_otlp_http_post(const struct ph_otlp_post *p, struct ph_otlp_answer *a)
{
	CURL *c = curl_easy_init();
	struct curl_slist *h = NULL;
	CURLcode rc;
	long st = 0;
	memset(a, 0, sizeof *a);
	a->retry_after_ms = -1;
	if (c == NULL) {
		snprintf(a->err, sizeof a->err, "libcurl could not start");
		return;
	}
	{
		char *ct = ph_xasprintf("Content-Type: %s", p->content_type);
		h = curl_slist_append(h, ct);
		free(ct);
	}
	if (p->gzip)
		h = curl_slist_append(h, "Content-Encoding: gzip");
	h = curl_slist_append(h, "Expect:");
	for (size_t i = 0; i < p->nheaders; i++) {
		char *line = ph_xasprintf("%s: %s", p->headers[i].name, p->headers[i].value);
		h = curl_slist_append(h, line);
		memset(line, 0, strlen(line));
		free(line);
	}
	curl_easy_setopt(c, CURLOPT_URL, p->url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, p->body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)p->len);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)p->timeout_ms);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "phantom-otlp/" PACKAGE_VERSION);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, drop_body);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, a);
	rc = curl_easy_perform(c);
	if (rc != CURLE_OK)
		snprintf(a->err, sizeof a->err, "%s", curl_easy_strerror(rc));
	else if (curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &st) == CURLE_OK)
		a->status = (int)st;
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
}
#else
void
ph_otlp_http_post(const struct ph_otlp_post *p, struct ph_otlp_answer *a)
{
	memset(a, 0, sizeof *a);
	a->retry_after_ms = -1;
	snprintf(a->err, sizeof a->err, "%s", ph_otlp_http_missing(p->url));
}
#endif
