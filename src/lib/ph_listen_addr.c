/* ph_listen_addr.c: reading a listen spec (see ph_listen_addr.h). */
#include "first.h"
#include "ph_listen_addr.h"
#include "ph_util.h"
#include <netdb.h>
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
