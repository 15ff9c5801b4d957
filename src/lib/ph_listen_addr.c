/* ph_listen_addr.c: reading a listen spec (see ph_listen_addr.h). */
#include "first.h"
#include "ph_listen_addr.h"
#include "ph_util.h"
#include <errno.h>
#include <grp.h>
#include <netdb.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

int
ph_listen_addr_parse(const char *spec, struct ph_listen_addr *a, char *errbuf, size_t errsz)
{
	const char *host, *port, *e = "is not an integer";
	size_t hl;
	long long p;
	memset(a, 0, sizeof *a);
	if (strncmp(spec, "unix:", 5) == 0) {
		struct sockaddr_un sun;
		a->path = spec + 5;
		if (strlen(a->path) >= sizeof sun.sun_path) {
			snprintf(errbuf, errsz, "unix socket path too long: %s", a->path);
			return -1;
		}
		return 0;
	}
	if (spec[0] == '[') {
		const char *close_b = strchr(spec, ']');
		if (close_b == NULL || close_b[1] != ':') {
			snprintf(errbuf, errsz, "bad listen address '%s': expected [ADDR]:PORT", spec);
			return -1;
		}
		host = spec + 1;
		hl = (size_t)(close_b - host);
		port = close_b + 2;
	} else {
		const char *colon = strrchr(spec, ':');
		if (colon == NULL) {
			snprintf(errbuf, errsz, "bad listen address '%s': expected HOST:PORT or unix:PATH", spec);
			return -1;
		}
		host = spec;
		hl = (size_t)(colon - spec);
		port = colon + 1;
	}
	if (hl >= sizeof a->host) {
		snprintf(errbuf, errsz, "bad listen address '%s': the host is longer than %zu bytes", spec,
			 sizeof a->host - 1);
		return -1;
	}
	if (strspn(port, "0123456789") != strlen(port) || ph_strtonum(port, 1, 65535, &p, &e) != 0) {
		snprintf(errbuf, errsz, "bad port '%s' in '%s': %s", port, spec, e);
		return -1;
	}
	memcpy(a->host, host, hl);
	snprintf(a->port, sizeof a->port, "%lld", p);
#ifdef PH_STATIC_BUILD
	/* a static glibc cannot load the NSS modules that look names up: the
	 * start binds with AI_NUMERICHOST, which refuses a name */
	if (a->host[0] != '\0') {
		struct addrinfo hints, *res = NULL;
		int rc;
		memset(&hints, 0, sizeof hints);
		hints.ai_socktype = SOCK_STREAM;
		hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV | AI_NUMERICHOST;
		rc = getaddrinfo(a->host, a->port, &hints, &res);
		if (res != NULL)
			freeaddrinfo(res);
		if (rc == EAI_NONAME) {
			snprintf(errbuf, errsz, "cannot listen on '%s': " PH_STATIC_NUMERIC, spec);
			return -1;
		}
	}
#endif
	return 0;
}

bool
ph_listen_perm_any(const struct ph_listen_perm *p)
{
	return p->mode >= 0 || p->uid >= 0 || p->gid >= 0;
}

int
ph_listen_mode_parse(const char *s, int *mode, char *errbuf, size_t errsz)
{
	int v = 0;
	const char *p = s;
	/* the value is checked digit by digit, so no run of digits overflows */
	while (*p >= '0' && *p <= '7' && (v = v * 8 + (*p - '0')) <= 0777)
		p++;
	if (p == s || *p != '\0') {
		snprintf(errbuf, errsz, "'%s' is not an octal mode from 0 to 0777 (such as 0660)", s);
		return -1;
	}
	*mode = v;
	return 0;
}

int
ph_listen_id_parse(const char *s, bool group, long long *id, char *errbuf, size_t errsz)
{
	const char *what = group ? "group" : "user", *e;
	if (*s != '\0' && strspn(s, "0123456789") == strlen(s)) {
		/* (uid_t)-1 tells chown(2) to leave it: not an id */
		if (ph_strtonum(s, 0, 4294967294LL, id, &e) == 0)
			return 0;
		snprintf(errbuf, errsz, "%s id '%s' %s (0 to 4294967294)", what, s, e);
		return -1;
	}
#ifdef PH_STATIC_BUILD
	snprintf(errbuf, errsz, "%s '%s': " PH_STATIC_NUMERIC_ID, what, s);
	return -1;
#else
	{
		struct passwd *pw = NULL;
		struct group *gr = NULL;
		errno = 0;
		if (group)
			gr = getgrnam(s);
		else
			pw = getpwnam(s);
		if (gr != NULL || pw != NULL) {
			*id = gr ? (long long)gr->gr_gid : (long long)pw->pw_uid;
			return 0;
		}
		/* getpwnam(3): these say "not found" as 0 does */
		if (errno == 0 || errno == ENOENT || errno == ESRCH || errno == EBADF || errno == EPERM)
			snprintf(errbuf, errsz, "no %s '%s' on this system", what, s);
		else
			snprintf(errbuf, errsz, "cannot look up %s '%s': %s", what, s, strerror(errno));
		return -1;
	}
#endif
}
