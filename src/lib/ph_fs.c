/* ph_fs.c: opening below a root. openat2(2) with RESOLVE_BENEATH where the
 * kernel has it and lets us call it (configure's HAVE_LINUX_OPENAT2_H, and
 * one probe at run time for kernels without it and seccomp filters that
 * answer ENOSYS or EPERM); otherwise a walk that opens one segment at a time
 * with O_NOFOLLOW from the directory opened before it, and follows a link
 * itself only when it stays below the root. Both give the same answers. */
#include "first.h"
#include "ph_fs.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(HAVE_LINUX_OPENAT2_H)
#include <linux/openat2.h>
#include <sys/syscall.h>
#if defined(SYS_openat2)
#define PH_FS_OPENAT2 1
#endif
#endif

/* Set by the unit test (which #includes this file) to run the walk even
 * where openat2 works. */
static bool fs_force_fallback;

/* The flags of the last segment: a file never blocks on open (FIFO), a
 * directory is opened to be read. */
static int
final_flags(bool dir)
{
	return O_RDONLY | O_CLOEXEC | O_NOCTTY | (dir ? O_DIRECTORY : O_NONBLOCK);
}

/* True when rel may be looked up at all: relative, no ".." segment. */
static bool
rel_allowed(const char *rel)
{
	const char *p = rel;
	if (rel[0] == '/')
		return false;
	while (*p) {
		size_t n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return false;
		p += n;
		while (*p == '/')
			p++;
	}
	return true;
}

#ifdef PH_FS_OPENAT2
enum { PROBE_UNKNOWN, PROBE_YES, PROBE_NO };
static int fs_openat2 = PROBE_UNKNOWN;

/* Whether openat2 can be called here, asked the kernel once per process:
 * ENOSYS (an old kernel) and EPERM (a seccomp filter) mean no. */
static bool
have_openat2(void)
{
	if (fs_openat2 == PROBE_UNKNOWN) {
		struct open_how how;
		int fd;
		memset(&how, 0, sizeof how);
		how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
		fd = (int)syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof how);
		if (fd >= 0)
			close(fd);
		fs_openat2 = fd < 0 && (errno == ENOSYS || errno == EPERM) ? PROBE_NO : PROBE_YES;
	}
	return fs_openat2 == PROBE_YES;
}

/* openat2 below rootfd. Returns the fd or -1 with errno. */
static int
open_kernel(int rootfd, const char *rel, bool dir)
{
	struct open_how how;
	memset(&how, 0, sizeof how);
	how.flags = (uint64_t)final_flags(dir);
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
	return (int)syscall(SYS_openat2, rootfd, rel[0] ? rel : ".", &how, sizeof how);
}
#endif

/* The walk without openat2. The directories passed through are held open
 * in stack[] (stack[0] is rootfd, borrowed), so ".." in a link's target is
 * a pop, never a lookup, and cannot climb above rootfd. Returns the fd of
 * the last segment or -1 with errno. */
static int
open_walk(int rootfd, const char *rel, bool dir)
{
	int stack[PH_FS_MAX_DEPTH + 1];
	size_t n = 1;
	char path[PATH_MAX], target[PATH_MAX];
	char *p = path;
	int links = 0, fd = -1, e;
	stack[0] = rootfd;
	if (strlen(rel) >= sizeof path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(path, rel);
	for (;;) {
		char *comp;
		size_t len;
		bool last, had_slash, need_dir;
		int flags;
		ssize_t tl;
		while (*p == '/')
			p++;
		if (*p == '\0') {
			/* the path ends at a directory already held ("", ".", a link's "..") */
			fd = openat(stack[n - 1], ".", final_flags(dir));
			goto out;
		}
		comp = p;
		len = strcspn(p, "/");
		p += len;
		had_slash = *p == '/';
		if (had_slash)
			*p++ = '\0';
		last = p[strspn(p, "/")] == '\0';
		if (strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			/* only a link's target gets here: rel_allowed refused it in rel */
			if (n == 1) {
				errno = EXDEV;
				goto fail;
			}
			close(stack[--n]);
			continue;
		}
		need_dir = had_slash || !last || dir;
		if (last)
			flags = final_flags(dir) | (need_dir ? O_DIRECTORY : 0);
		else
			flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
		fd = openat(stack[n - 1], comp, flags | O_NOFOLLOW);
		if (fd >= 0) {
			if (last)
				goto out;
			if (n > PH_FS_MAX_DEPTH) {
				close(fd);
				errno = ENAMETOOLONG;
				goto fail;
			}
			stack[n++] = fd;
			continue;
		}
		if (errno != ELOOP && errno != ENOTDIR)
			goto fail;
		/* O_NOFOLLOW stopped at a link, or this is not a directory */
		e = errno;
		tl = readlinkat(stack[n - 1], comp, target, sizeof target);
		if (tl < 0) {
			errno = e;
			goto fail;
		}
		if ((size_t)tl >= sizeof target || (size_t)tl + 1 + strlen(p) >= sizeof path) {
			errno = ENAMETOOLONG;
			goto fail;
		}
		if (++links > PH_FS_MAX_LINKS) {
			errno = ELOOP;
			goto fail;
		}
		if (tl == 0 || target[0] == '/') {
			errno = tl == 0 ? ENOENT : EXDEV;
			goto fail;
		}
		/* go on with the target, then what followed the link */
		{
			size_t rest = strlen(p), sl = had_slash ? 1 : 0;
			memmove(path + (size_t)tl + sl, p, rest + 1);
			memcpy(path, target, (size_t)tl);
			if (had_slash)
				path[tl] = '/';
			p = path;
		}
	}
fail:
	fd = -1;
out:
	e = errno;
	while (n > 1)
		close(stack[--n]);
	errno = e;
	return fd;
}

/* Opens rel below root as a file or a directory. Returns the fd or -1
 * with errno. */
static int
open_beneath(const char *root, const char *rel, bool dir)
{
	int rootfd, fd, e;
	if (!rel_allowed(rel)) {
		errno = EXDEV;
		return -1;
	}
	if (!dir && rel[0] == '\0') {
		errno = ENOENT;
		return -1;
	}
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return -1;
#ifdef PH_FS_OPENAT2
	if (!fs_force_fallback && have_openat2())
		fd = open_kernel(rootfd, rel, dir);
	else
		fd = open_walk(rootfd, rel, dir);
#else
	fd = open_walk(rootfd, rel, dir);
#endif
	e = errno;
	close(rootfd);
	errno = e;
	return fd;
}

int
ph_fs_open_beneath(const char *root, const char *rel)
{
	return open_beneath(root, rel, false);
}

int
ph_fs_opendir_fd_beneath(const char *root, const char *rel)
{
	return open_beneath(root, rel, true);
}

DIR *
ph_fs_opendir_beneath(const char *root, const char *rel)
{
	int fd = open_beneath(root, rel, true), e;
	DIR *d;
	if (fd < 0)
		return NULL;
	d = fdopendir(fd);
	if (d == NULL) {
		e = errno;
		close(fd);
		errno = e;
	}
	return d;
}

const char *
ph_fs_strerror(int err)
{
	if (err == EXDEV)
		return "it leads outside the directory (\"..\", an absolute path or a symbolic link)";
	return strerror(err);
}
