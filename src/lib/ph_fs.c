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

/* The state of open_walk. The directories passed through are held open in
 * stack[] (stack[0] is rootfd, borrowed; the others are owned and closed at
 * the end); path is the rest of the walk, p the next segment in it. */
struct walk {
	int stack[PH_FS_MAX_DEPTH + 1];
	size_t n;
	char path[PATH_MAX];
	char *p;
	int links;
	bool dir;
};

/* One segment of the path, NUL-terminated in walk.path. */
struct seg {
	char *comp;
	bool last;      /* nothing but slashes follows */
	bool had_slash; /* a slash followed it: it must be a directory */
};

enum step { STEP_NEXT, STEP_DONE, STEP_FAIL };

/* Cuts the next segment off w->p into *sg. Returns false when the path
 * ends (only slashes left). */
static bool
walk_next(struct walk *w, struct seg *sg)
{
	size_t len;
	while (*w->p == '/')
		w->p++;
	if (*w->p == '\0')
		return false;
	sg->comp = w->p;
	len = strcspn(w->p, "/");
	w->p += len;
	sg->had_slash = *w->p == '/';
	if (sg->had_slash)
		*w->p++ = '\0';
	sg->last = w->p[strspn(w->p, "/")] == '\0';
	return true;
}

/* A ".." segment, which only a link's target can hold (rel_allowed refused
 * it in rel): closes the directory on top. Fails with EXDEV at the root. */
static enum step
walk_up(struct walk *w)
{
	if (w->n == 1) {
		errno = EXDEV;
		return STEP_FAIL;
	}
	close(w->stack[--w->n]);
	return STEP_NEXT;
}

/* Keeps fd, a directory on the way, on the stack (which then owns it).
 * Fails with ENAMETOOLONG, fd closed, past PH_FS_MAX_DEPTH. */
static enum step
walk_push(struct walk *w, int fd)
{
	if (w->n > PH_FS_MAX_DEPTH) {
		close(fd);
		errno = ENAMETOOLONG;
		return STEP_FAIL;
	}
	w->stack[w->n++] = fd;
	return STEP_NEXT;
}

/* Where O_NOFOLLOW stopped at sg (errno e: a link, or not a directory):
 * reads the link and puts its target in front of the rest of the path.
 * Fails, errno set, when it is no link (e), too long, one link too many,
 * empty or absolute. */
static enum step
walk_link(struct walk *w, const struct seg *sg, int e)
{
	char target[PATH_MAX];
	size_t rest, sl = sg->had_slash ? 1 : 0;
	ssize_t tl = readlinkat(w->stack[w->n - 1], sg->comp, target, sizeof target);
	if (tl < 0) {
		errno = e;
		return STEP_FAIL;
	}
	if ((size_t)tl >= sizeof target || (size_t)tl + 1 + strlen(w->p) >= sizeof w->path) {
		errno = ENAMETOOLONG;
		return STEP_FAIL;
	}
	if (++w->links > PH_FS_MAX_LINKS) {
		errno = ELOOP;
		return STEP_FAIL;
	}
	if (tl == 0 || target[0] == '/') {
		errno = tl == 0 ? ENOENT : EXDEV;
		return STEP_FAIL;
	}
	/* go on with the target, then what followed the link */
	rest = strlen(w->p);
	memmove(w->path + (size_t)tl + sl, w->p, rest + 1);
	memcpy(w->path, target, (size_t)tl);
	if (sg->had_slash)
		w->path[tl] = '/';
	w->p = w->path;
	return STEP_NEXT;
}

/* One segment of the walk: opens it without following a link from the
 * directory on top. STEP_DONE with the last one's fd (or -1 and errno) in
 * *fd; STEP_NEXT to go on; STEP_FAIL with errno. */
static enum step
walk_step(struct walk *w, int *fd)
{
	struct seg sg;
	int flags;
	if (!walk_next(w, &sg)) {
		/* the path ends at a directory already held ("", ".", a link's "..") */
		*fd = openat(w->stack[w->n - 1], ".", final_flags(w->dir));
		return STEP_DONE;
	}
	if (strcmp(sg.comp, ".") == 0)
		return STEP_NEXT;
	if (strcmp(sg.comp, "..") == 0)
		return walk_up(w);
	if (sg.last)
		flags = final_flags(w->dir) | (sg.had_slash || w->dir ? O_DIRECTORY : 0);
	else
		flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
	*fd = openat(w->stack[w->n - 1], sg.comp, flags | O_NOFOLLOW);
	if (*fd >= 0)
		return sg.last ? STEP_DONE : walk_push(w, *fd);
	if (errno != ELOOP && errno != ENOTDIR)
		return STEP_FAIL;
	/* O_NOFOLLOW stopped at a link, or this is not a directory */
	return walk_link(w, &sg, errno);
}

/* The walk without openat2: one segment at a time from the directory
 * opened before it, so ".." in a link's target is a pop, never a lookup,
 * and cannot climb above rootfd (borrowed). Returns the fd of the last
 * segment or -1 with errno. */
static int
open_walk(int rootfd, const char *rel, bool dir)
{
	struct walk w;
	enum step st;
	int fd = -1, e;
	w.stack[0] = rootfd;
	w.n = 1;
	w.links = 0;
	w.dir = dir;
	if (strlen(rel) >= sizeof w.path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(w.path, rel);
	w.p = w.path;
	while ((st = walk_step(&w, &fd)) == STEP_NEXT)
		;
	if (st == STEP_FAIL)
		fd = -1;
	e = errno;
	while (w.n > 1)
		close(w.stack[--w.n]);
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
