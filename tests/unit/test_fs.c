/* test_fs.c: ph_fs.c, opening below a root, once with openat2 (where the
 * kernel has it) and once with the walk that replaces it forced: regular
 * files and links that stay inside open, and "..", absolute paths, links
 * leaving the root (as the last segment or as a directory on the way,
 * relative or absolute) and link loops are refused, the same in both. */
#include "first.h"
#include "ph_fs.c" /* its static switch to force the walk */
#include "ph_util.h"
#include "tap.h"
#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

static char tmpdir[256];
static char root[300];

static void
put(const char *rel, const char *text)
{
	char *p = ph_xasprintf("%s/%s", tmpdir, rel);
	FILE *f = fopen(p, "w");
	if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0) {
		perror(p);
		exit(2);
	}
	free(p);
}

static void
dir(const char *rel)
{
	char *p = ph_xasprintf("%s/%s", tmpdir, rel);
	if (mkdir(p, 0700) != 0) {
		perror(p);
		exit(2);
	}
	free(p);
}

static void
link_to(const char *target, const char *rel)
{
	char *p = ph_xasprintf("%s/%s", tmpdir, rel);
	if (symlink(target, p) != 0) {
		perror(p);
		exit(2);
	}
	free(p);
}

/* The contents of rel below the root, or "" with *err the errno of a
 * refused open. Static buffer. */
static const char *
contents(const char *rel, int *err)
{
	static char buf[256];
	int fd = ph_fs_open_beneath(root, rel);
	ssize_t n;
	*err = 0;
	buf[0] = '\0';
	if (fd < 0) {
		*err = errno;
		return buf;
	}
	n = read(fd, buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
	return buf;
}

/* The names in directory rel below the root, sorted, joined by ' ', or
 * "" with *err set. Static buffer. */
static const char *
listing(const char *rel, int *err)
{
	static char buf[256];
	char *names[32];
	size_t n = 0, off = 0;
	struct dirent *de;
	DIR *d = ph_fs_opendir_beneath(root, rel);
	*err = 0;
	buf[0] = '\0';
	if (d == NULL) {
		*err = errno;
		return buf;
	}
	while ((de = readdir(d)) != NULL && n < PH_ARRAY_LEN(names))
		if (de->d_name[0] != '.')
			names[n++] = ph_xstrdup(de->d_name);
	closedir(d);
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (strcmp(names[j], names[i]) < 0) {
				char *t = names[i];
				names[i] = names[j];
				names[j] = t;
			}
	for (size_t i = 0; i < n; i++) {
		off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s", i ? " " : "", names[i]);
		free(names[i]);
	}
	return buf;
}

static void
checks(const char *mode)
{
	static const struct {
		const char *rel, *why;
		int err;
	} refused[] = {
		{"..", "'..'", EXDEV},
		{"sub/../notes.txt", "'..' inside the path", EXDEV},
		{"/etc/passwd", "an absolute path", EXDEV},
		{"escape.txt", "a last segment linked outside (relative link)", EXDEV},
		{"abs.txt", "a last segment linked outside (absolute link)", EXDEV},
		{"sub/escape.txt", "a link two levels up, outside", EXDEV},
		{"outdir/secret.txt", "a directory on the way linked outside (relative)", EXDEV},
		{"absdir/secret.txt", "a directory on the way linked outside (absolute)", EXDEV},
		{"sub/outdir/secret.txt", "a linked directory deeper down, outside", EXDEV},
		{"selflink", "a link loop", ELOOP},
		{"nothere", "a missing file", ENOENT},
		{"notes.txt/x", "a file used as a directory", ENOTDIR},
		{"", "an empty path", ENOENT},
	};
	int err;
	const char *got;
	is_str(contents("notes.txt", &err), "hello notes", "%s: a regular file opens", mode);
	is_str(contents("sub/inner.txt", &err), "nested", "%s: a file in a subdirectory opens", mode);
	is_str(contents("./sub//inner.txt", &err), "nested", "%s: '.' and '//' are harmless", mode);
	is_str(contents("inside.txt", &err), "hello notes", "%s: a link that stays inside is followed", mode);
	is_str(contents("sub/up.txt", &err), "hello notes", "%s: a link through '..' that stays inside is followed",
	       mode);
	is_str(contents("sublink/inner.txt", &err), "nested", "%s: a directory linked inside is followed", mode);
	{
		int fd = ph_fs_open_beneath(root, "fifo");
		ok(fd >= 0, "%s: a FIFO opens without blocking (the caller's fstat refuses it)", mode);
		if (fd >= 0)
			close(fd);
	}
	for (size_t i = 0; i < PH_ARRAY_LEN(refused); i++) {
		got = contents(refused[i].rel, &err);
		ok(err == refused[i].err && got[0] == '\0', "%s: refused, %s (%s): %s", mode, refused[i].why,
		   refused[i].rel, err ? strerror(err) : "it opened");
	}
	is_str(listing("", &err), "abs.txt absdir escape.txt fifo inside.txt notes.txt outdir selflink sub sublink",
	       "%s: the root lists through an fd", mode);
	is_str(listing("sub", &err), "escape.txt inner.txt outdir up.txt", "%s: a subdirectory lists", mode);
	is_str(listing("sublink", &err), "escape.txt inner.txt outdir up.txt",
	       "%s: a directory linked inside lists", mode);
	got = listing("outdir", &err);
	ok(err == EXDEV && got[0] == '\0', "%s: a directory linked outside does not list: %s", mode,
	   err ? strerror(err) : "it listed");
	got = listing("..", &err);
	ok(err == EXDEV && got[0] == '\0', "%s: '..' does not list", mode);
	got = listing("notes.txt", &err);
	ok(err == ENOTDIR, "%s: a file does not list as a directory", mode);
}

int
main(void)
{
	char *cmd, *abs;
	snprintf(tmpdir, sizeof tmpdir, "%s/phantom-fs-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 2;
	}
	snprintf(root, sizeof root, "%s/root", tmpdir);
	dir("root");
	dir("root/sub");
	dir("outside");
	put("root/notes.txt", "hello notes");
	put("root/sub/inner.txt", "nested");
	put("outside/secret.txt", "the secret");
	link_to("notes.txt", "root/inside.txt");
	link_to("../notes.txt", "root/sub/up.txt");
	link_to("sub", "root/sublink");
	link_to("../outside/secret.txt", "root/escape.txt");
	abs = ph_xasprintf("%s/outside/secret.txt", tmpdir);
	link_to(abs, "root/abs.txt");
	free(abs);
	link_to("../../outside/secret.txt", "root/sub/escape.txt");
	link_to("../outside", "root/outdir");
	link_to("../../outside", "root/sub/outdir");
	abs = ph_xasprintf("%s/outside", tmpdir);
	link_to(abs, "root/absdir");
	free(abs);
	link_to("selflink", "root/selflink");
	{
		char *p = ph_xasprintf("%s/root/fifo", tmpdir);
		if (mkfifo(p, 0600) != 0) {
			perror(p);
			return 2;
		}
		free(p);
	}

#ifdef PH_FS_OPENAT2
	printf("# openat2 %s here\n", have_openat2() ? "works" : "is not available (the walk runs twice)");
#else
	printf("# built without openat2 (the walk runs twice)\n");
#endif
	checks("openat2");
	fs_force_fallback = true;
	checks("walk");
	fs_force_fallback = false;

	cmd = ph_xasprintf("rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	free(cmd);
	return tap_done();
}
