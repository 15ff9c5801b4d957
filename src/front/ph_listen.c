/* ph_listen.c: binding our own listening socket (--listen), carefully: a live
 * unix socket is never clobbered, a stale one is removed, errors are reported
 * instead of exiting inside a library. */
#include "first.h"
#include "ph_front.h"
#include "ph_listen_addr.h"
#include "ph_util.h"
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
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

/* Gives the socket just bound at path the owner and group perm asks for.
 * The path is opened without following a link and must still be a socket,
 * so that whoever can write its directory cannot turn the change onto
 * another file. Returns 0, or -1 with errbuf set. */
static int
own_socket(const char *path, const struct ph_listen_perm *perm, char *errbuf, size_t errsz)
{
	struct stat st;
	int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC), e;
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) {
		snprintf(errbuf, errsz, "cannot set the owner of %s: %s", path,
			 fd < 0 ? strerror(errno) : "it is no longer the socket just bound");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (fchownat(fd, "", (uid_t)perm->uid, (gid_t)perm->gid, AT_EMPTY_PATH) == 0) {
		close(fd);
		return 0;
	}
	e = errno;
	close(fd);
	if (e == EPERM && perm->uid >= 0 && (uid_t)perm->uid != st.st_uid)
		snprintf(errbuf, errsz, "cannot give %s to user %lld (listen_owner): %s; changing "
			 "the owner needs root", path, perm->uid, strerror(e));
	else if (e == EPERM)
		snprintf(errbuf, errsz, "cannot give %s to group %lld (listen_group): %s; without root "
			 "the group must be one of the server's user's", path, perm->gid, strerror(e));
	else
		snprintf(errbuf, errsz, "cannot set the owner of %s: %s", path, strerror(e));
	return -1;
}

/* Binds the unix socket path (its length checked by ph_listen_addr_parse)
 * with perm's mode, owner and group (perm may be NULL). Returns the
 * listening descriptor, or -1 with errbuf set. */
static int
listen_unix(const char *path, const struct ph_listen_perm *perm, char *errbuf, size_t errsz)
{
	struct sockaddr_un sun;
	struct stat st;
	int fd, rc;
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
	if (perm != NULL && perm->mode >= 0) {
		/* bind creates the file 0777 less the umask: made with the mode
		 * asked for, the socket is never open wider, as it would be for a
		 * moment between bind and a chmod (the umask is the process's;
		 * phantom-fcgi runs no other thread that could create a file) */
		mode_t old = umask((mode_t)(0777 & ~perm->mode));
		rc = bind(fd, (struct sockaddr *)&sun, sizeof sun);
		umask(old);
	} else {
		rc = bind(fd, (struct sockaddr *)&sun, sizeof sun);
	}
	if (rc != 0 || listen(fd, BACKLOG) != 0) {
		snprintf(errbuf, errsz, "cannot listen on %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (perm != NULL && (perm->uid >= 0 || perm->gid >= 0) &&
	    own_socket(path, perm, errbuf, errsz) != 0) {
		unlink(path);
		close(fd);
		return -1;
	}
	return fd;
}

/* Binds a's host and port (spec is what it was read from, for messages).
 * Returns the listening descriptor, or -1 with errbuf set. */
static int
listen_tcp(const char *spec, const struct ph_listen_addr *a, char *errbuf, size_t errsz)
{
	struct addrinfo hints, *res = NULL, *ai;
	int fd = -1, rc, one = 1;
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
#ifdef PH_STATIC_BUILD
	/* a static glibc cannot load the NSS modules that look names up */
	hints.ai_flags |= AI_NUMERICHOST;
#endif
	rc = getaddrinfo(a->host[0] ? a->host : NULL, a->port, &hints, &res);
	if (rc != 0) {
		snprintf(errbuf, errsz, "cannot resolve '%s': %s", a->host, gai_strerror(rc));
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
ph_listen_open(const char *spec, const struct ph_listen_perm *perm, char *errbuf, size_t errsz)
{
	struct ph_listen_addr a;
	snprintf(errbuf, errsz, "cannot listen on %s", spec);
	if (ph_listen_addr_parse(spec, &a, errbuf, errsz) != 0)
		return -1;
	if (a.path != NULL)
		return listen_unix(a.path, perm, errbuf, errsz);
	return listen_tcp(spec, &a, errbuf, errsz);
}

/* The socket activation protocol of sd_listen_fds(3), read without
 * libsystemd: LISTEN_PID names the process the sockets are for, LISTEN_FDS
 * how many there are, starting at fd 3. The variables are removed at once,
 * whatever they say, so that no exec handler or other child inherits them
 * (a child would otherwise see LISTEN_FDS and a pid that is not its own). */
int
ph_listen_activated(char *errbuf, size_t errsz)
{
	const char *pid_s = getenv("LISTEN_PID"), *fds_s = getenv("LISTEN_FDS");
	char pid_copy[32], fds_copy[32];
	long long pid, nfds;
	const char *e;
	int fl;

	snprintf(pid_copy, sizeof pid_copy, "%s", pid_s ? pid_s : "");
	snprintf(fds_copy, sizeof fds_copy, "%s", fds_s ? fds_s : "");
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	if (pid_s == NULL || fds_s == NULL)
		return -1;
	/* for another process (we were started by one that got them): not ours */
	if (ph_strtonum(pid_copy, 1, 0x7fffffffLL, &pid, &e) != 0 || pid != (long long)getpid())
		return -1;
	if (ph_strtonum(fds_copy, 0, 0x7fffffffLL, &nfds, &e) != 0) {
		snprintf(errbuf, errsz, "socket activation: LISTEN_FDS='%s' is not a count of sockets",
			 fds_copy);
		return -2;
	}
	if (nfds == 0)
		return -1;
	if (nfds > 1) {
		snprintf(errbuf, errsz,
			 "socket activation: %lld sockets passed (LISTEN_FDS=%lld), Phantom serves on "
			 "exactly one: give the .socket unit a single ListenStream=", nfds, nfds);
		return -2;
	}
	if (!ph_fd_is_listener(PH_LISTEN_FDS_START)) {
		snprintf(errbuf, errsz,
			 "socket activation: fd %d is not a listening stream socket (LISTEN_FDS=1); "
			 "use ListenStream= with Accept=no", PH_LISTEN_FDS_START);
		return -2;
	}
	/* exec handlers get fresh descriptors 0..4 anyway; keep the socket out
	 * of anything else this process might exec */
	fl = fcntl(PH_LISTEN_FDS_START, F_GETFD);
	if (fl >= 0)
		fcntl(PH_LISTEN_FDS_START, F_SETFD, fl | FD_CLOEXEC);
	return PH_LISTEN_FDS_START;
}
