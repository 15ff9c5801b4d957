/* ph_listen.c: binding our own listening socket (--listen), carefully: a live
 * unix socket is never clobbered, a stale one is removed, errors are reported
 * instead of exiting inside a library. */
#include "first.h"
#include "ph_front.h"
#include "ph_util.h"
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define BACKLOG 1024

bool
ph_fd_is_socket(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

bool
ph_fd_is_listener(int fd)
{
	int v = 0;
	socklen_t l = sizeof v;
	if (!ph_fd_is_socket(fd))
		return false;
	return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &l) == 0 && v != 0;
}

static int
listen_unix(const char *path, char *errbuf, size_t errsz)
{
	struct sockaddr_un sun;
	struct stat st;
	int fd;
	if (strlen(path) >= sizeof sun.sun_path) {
		snprintf(errbuf, errsz, "unix socket path too long: %s", path);
		return -1;
	}
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, strlen(path));
	if (lstat(path, &st) == 0) {
		int probe;
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(errbuf, errsz, "%s exists and is not a socket", path);
			return -1;
		}
		probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (probe >= 0 && connect(probe, (struct sockaddr *)&sun, sizeof sun) == 0) {
			close(probe);
			snprintf(errbuf, errsz, "%s is in use by a running server", path);
			return -1;
		}
		if (probe >= 0)
			close(probe);
		if (unlink(path) != 0) {
			snprintf(errbuf, errsz, "cannot remove stale socket %s: %s", path, strerror(errno));
			return -1;
		}
	}
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0) {
		snprintf(errbuf, errsz, "socket: %s", strerror(errno));
		return -1;
	}
	if (bind(fd, (struct sockaddr *)&sun, sizeof sun) != 0 || listen(fd, BACKLOG) != 0) {
		snprintf(errbuf, errsz, "cannot listen on %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static int
listen_tcp(const char *spec, char *errbuf, size_t errsz)
{
	char host[256];
	const char *port, *colon;
	struct addrinfo hints, *res = NULL, *ai;
	int fd = -1, rc, one = 1;
	if (spec[0] == '[') {
		const char *close_b = strchr(spec, ']');
		if (close_b == NULL || close_b[1] != ':') {
			snprintf(errbuf, errsz, "bad listen address '%s': expected [ADDR]:PORT", spec);
			return -1;
		}
		snprintf(host, sizeof host, "%.*s", (int)(close_b - spec - 1), spec + 1);
		port = close_b + 2;
	} else {
		colon = strrchr(spec, ':');
		if (colon == NULL) {
			snprintf(errbuf, errsz, "bad listen address '%s': expected HOST:PORT or unix:PATH",
				 spec);
			return -1;
		}
		snprintf(host, sizeof host, "%.*s", (int)(colon - spec), spec);
		port = colon + 1;
	}
	{
		long long p;
		const char *e;
		if (ph_strtonum(port, 1, 65535, &p, &e) != 0) {
			snprintf(errbuf, errsz, "bad port '%s' in '%s': %s", port, spec, e);
			return -1;
		}
	}
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	rc = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
	if (rc != 0) {
		snprintf(errbuf, errsz, "cannot resolve '%s': %s", host, gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, BACKLOG) == 0)
			break;
		snprintf(errbuf, errsz, "cannot listen on %s: %s", spec, strerror(errno));
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

int
ph_listen_open(const char *spec, char *errbuf, size_t errsz)
{
	snprintf(errbuf, errsz, "cannot listen on %s", spec);
	if (strncmp(spec, "unix:", 5) == 0)
		return listen_unix(spec + 5, errbuf, errsz);
	return listen_tcp(spec, errbuf, errsz);
}
