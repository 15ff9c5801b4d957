/* ph_http_curl.c: the libcurl engine of ph_http.h (the dynamic build). */
#include "first.h"
#include "ph_http.h"
#include <stdio.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#ifdef PH_HTTP_CURL
#include <curl/curl.h>

const char *
ph_http_engine(void)
{
	return "libcurl";
}

/* libcurl's handle keeps its connections (and its name cache) between
 * transfers; curl_easy_reset between two keeps them too. */
struct ph_http_conn {
	CURL *h;
};

struct ph_http_conn *
ph_http_conn_new(void)
{
	return ph_xcalloc(1, sizeof(struct ph_http_conn));
}

void
ph_http_conn_free(struct ph_http_conn *c)
{
	if (c == NULL)
		return;
	if (c->h != NULL)
		curl_easy_cleanup(c->h);
	free(c);
}

struct sink {
	struct ph_buf b;
	size_t max;
	bool over;
	char why[CURL_ERROR_SIZE]; /* libcurl's detail of a failure */
};

static size_t
on_data(char *p, size_t sz, size_t nm, void *u)
{
	struct sink *s = u;
	size_t n = sz * nm;
	if (s->b.len + n > s->max) {
		s->over = true;
		return 0; /* libcurl stops the transfer */
	}
	ph_buf_add(&s->b, p, n);
	return n;
}

/* The request's headers as libcurl's list (NULL when it has none). */
static struct curl_slist *
headers(const struct ph_http_req *rq)
{
	struct curl_slist *l = NULL;
	for (size_t i = 0; rq->hdr != NULL && rq->hdr[i] != NULL && rq->hdr[i + 1] != NULL; i += 2) {
		char *h = ph_xasprintf("%s: %s", rq->hdr[i], rq->hdr[i + 1]);
		l = curl_slist_append(l, h);
		sodium_memzero(h, strlen(h)); /* a header may be a secret */
		free(h);
	}
	if (rq->body != NULL && rq->content_type != NULL) {
		char *h = ph_xasprintf("Content-Type: %s", rq->content_type);
		l = curl_slist_append(l, h);
		free(h);
	}
	if (rq->body != NULL)
		l = curl_slist_append(l, "Expect:"); /* a large body goes at once, no 100-continue wait */
	return l;
}

static void
set_request(CURL *h, const struct ph_http_req *rq, struct curl_slist *hdr, struct sink *s)
{
	const char *how;
	const char *ca = rq->ca_file ? rq->ca_file : ph_http_ca_default(&how);
	curl_easy_setopt(h, CURLOPT_URL, rq->url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)rq->timeout_ms);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)rq->timeout_ms);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "phantom/" PACKAGE_VERSION);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, s->why);
	if (ca != NULL)
		curl_easy_setopt(h, CURLOPT_CAINFO, ca);
	if (rq->body != NULL) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->body_len);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, rq->body);
	}
	if (rq->user != NULL) {
		curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(h, CURLOPT_USERNAME, rq->user);
		curl_easy_setopt(h, CURLOPT_PASSWORD, rq->pass ? rq->pass : "");
	}
}

/* The answer's Retry-After in seconds (-1: none or a date; at most a day). */
static long long
retry_after(CURL *h)
{
	curl_off_t ra = -1;
	if (curl_easy_getinfo(h, CURLINFO_RETRY_AFTER, &ra) != CURLE_OK || ra <= 0)
		return ra == 0 ? 0 : -1;
	return ra > 86400 ? -1 : (long long)ra;
}

/* ph_http_send; a failure says libcurl's detail when detail is set (its
 * error buffer: "SSL certificate problem: ..."), else only what
 * curl_easy_strerror says, as ph_http_do always has. */
static int
perform(const struct ph_http_req *rq, bool detail, struct ph_http_ans *an, struct ph_buf *out, char *err, size_t esz)
{
	static bool inited;
	struct sink s = {.max = rq->max_bytes};
	struct curl_slist *hdr;
	CURL *h;
	CURLcode rc;
	long status = 0;
	if (!inited && curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK)
		inited = true;
	an->status = 0;
	an->retry_after_s = -1;
	ph_buf_init(&s.b);
	ph_buf_init(out);
	if (rq->keep != NULL && rq->keep->h != NULL) {
		h = rq->keep->h; /* with the connection the last request left open */
	} else if ((h = curl_easy_init()) == NULL) {
		snprintf(err, esz, "libcurl failed to start");
		return -1;
	} else if (rq->keep != NULL) {
		rq->keep->h = h;
	}
	hdr = headers(rq);
	set_request(h, rq, hdr, &s);
	rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	an->retry_after_s = retry_after(h);
	if (rq->keep != NULL) /* its options go (they point at hdr and s), its connection stays */
		curl_easy_reset(h);
	else
		curl_easy_cleanup(h);
	curl_slist_free_all(hdr);
	if (rc != CURLE_OK || status < 100 || status > 599) {
		if (s.over)
			snprintf(err, esz, "%s: more than %zu bytes", rq->url, rq->max_bytes);
		else if (rc != CURLE_OK)
			snprintf(err, esz, "%s: %s", rq->url, detail && s.why[0] ? s.why : curl_easy_strerror(rc));
		else
			snprintf(err, esz, "%s: no HTTP status", rq->url);
		ph_buf_free(&s.b);
		return -1;
	}
	an->status = (int)status;
	ph_buf_addc(&s.b, '\0'); /* an empty body too has its NUL */
	s.b.len--;
	*out = s.b;
	return 0;
}

int
ph_http_send(const struct ph_http_req *rq, struct ph_http_ans *an, struct ph_buf *out, char *err, size_t esz)
{
	return perform(rq, true, an, out, err, esz);
}

int
ph_http_do(const struct ph_http_req *rq, struct ph_buf *out, char *err, size_t esz)
{
	struct ph_http_ans an;
	if (perform(rq, false, &an, out, err, esz) != 0)
		return -1;
	if (an.status != 200) {
		snprintf(err, esz, "%s answered HTTP %d", rq->url, an.status);
		ph_buf_free(out);
		return -1;
	}
	return 0;
}
#endif
