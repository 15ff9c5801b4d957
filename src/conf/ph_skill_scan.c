/* ph_skill_scan.c: the files of each skill, found at load: its directory
 * walked below the skill root (opened beneath it, links followed only to
 * regular files inside it), bounded by skills.max_files, max_bytes and
 * max_depth; each file given to the deepest skill that holds it; templates
 * and SKILL.md checked; then each skill's tree, its files and those of the
 * skills nested in it. Problems are reported as ph_skill_load.c does. */
#include "first.h"
#include "ph_skill_scan.h"
#include "ph_fs.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct scan {
	struct lctx *L;
	struct ph_skill *k;
	size_t self;
	char **skip_dirs;   /* real directories of other skills inside this one */
	size_t nskip_dirs;
	char **skip_rels;   /* served paths that nested skills own */
	size_t nskip_rels;
	long long bytes;
	bool failed;
};

static bool
name_servable(const char *name)
{
	size_t n = strlen(name);
	if (!ph_utf8_valid(name, n))
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];
		if (c < 0x20 || c == 0x7f || c == '\\')
			return false;
	}
	return true;
}

static bool
owned_by_nested(const struct scan *s, const char *rel)
{
	for (size_t i = 0; i < s->nskip_rels; i++) {
		size_t n = strlen(s->skip_rels[i]);
		if (strncmp(rel, s->skip_rels[i], n) == 0 && (rel[n] == '\0' || rel[n] == '/'))
			return true;
	}
	return false;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_file(struct scan *s, const char *rel_disk, const char *abs, off_t size);

static void walk_dir(struct scan *s, const char *abs, const char *rel, int depth);

/* The names in d that may be served (no . .., no hidden files), sorted;
 * their number in *n. Caller frees each name and the array (NULL when
 * there is none). */
static char **
dir_names(DIR *d, size_t *n)
{
	struct dirent *de;
	char **names = NULL;
	size_t nn = 0;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue; /* . .. and hidden files are never served */
		names = ph_xrealloc(names, (nn + 1) * sizeof *names);
		names[nn++] = ph_xstrdup(de->d_name);
	}
	if (nn > 1) /* qsort wants an array, never NULL */
		qsort(names, nn, sizeof *names, name_cmp);
	*n = nn;
	return names;
}

/* A symbolic link at path (r below the skill root): served when it ends at
 * a regular file inside the skill directory, opened below it as requests
 * will; anything else is a problem. */
static void
walk_link(struct scan *s, const char *path, const char *r)
{
	int fd = ph_fs_open_beneath(s->k->dir, r);
	struct stat ts;
	if (fd < 0 && (errno == EXDEV || errno == ELOOP)) {
		PROB(s->L, s->k->line, "skill '%s': %s is a symbolic link pointing outside "
		     "the skill directory", s->k->path, path);
		s->failed = true;
	} else if (fd < 0) {
		PROB(s->L, s->k->line, "skill '%s': cannot follow the symbolic link %s: %s",
		     s->k->path, path, strerror(errno));
		s->failed = true;
	} else if (fstat(fd, &ts) != 0 || !S_ISREG(ts.st_mode)) {
		PROB(s->L, s->k->line, "skill '%s': %s is a symbolic link to something "
		     "other than a regular file", s->k->path, path);
		s->failed = true;
	} else if (!owned_by_nested(s, r)) {
		add_file(s, r, path, ts.st_size);
	}
	if (fd >= 0)
		close(fd);
}

/* One entry name of the open directory d (abs, rel below the skill root,
 * at depth): a directory is walked unless another skill owns it, a file or
 * a link to one is added, anything else is a problem. */
static void
walk_entry(struct scan *s, DIR *d, const char *abs, const char *rel, const char *name, int depth)
{
	char *path = ph_xasprintf("%s/%s", abs, name);
	char *r = rel[0] ? ph_xasprintf("%s/%s", rel, name) : ph_xstrdup(name);
	struct stat st;
	bool skip = false;
	if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		PROB(s->L, s->k->line, "skill '%s': cannot stat %s: %s", s->k->path, path,
		     strerror(errno));
		s->failed = true;
	} else if (!name_servable(name)) {
		PROB(s->L, s->k->line, "skill '%s': the name of %s cannot be served (invalid "
		     "UTF-8, a control character or a backslash)", s->k->path, path);
		s->failed = true;
	} else if (S_ISDIR(st.st_mode)) {
		for (size_t j = 0; j < s->nskip_dirs; j++)
			skip = skip || strcmp(path, s->skip_dirs[j]) == 0;
		if (!skip && !owned_by_nested(s, r))
			walk_dir(s, path, r, depth + 1);
	} else if (S_ISLNK(st.st_mode)) {
		walk_link(s, path, r);
	} else if (S_ISREG(st.st_mode)) {
		if (!owned_by_nested(s, r))
			add_file(s, r, path, st.st_size);
	} else {
		PROB(s->L, s->k->line, "skill '%s': %s is not a regular file or directory",
		     s->k->path, path);
		s->failed = true;
	}
	free(path);
	free(r);
}

/* Walks dir (absolute, real) whose path below the skill root is rel ("" at
 * the root). The directory is opened below the skill root and its entries
 * are looked at through that fd, never by a path a link could redirect. */
static void
walk_dir(struct scan *s, const char *abs, const char *rel, int depth)
{
	DIR *d;
	char **names;
	size_t nn = 0;
	if (depth > s->L->sc->max_depth) {
		PROB(s->L, s->k->line, "skill '%s': directory '%s' is nested more than %lld levels deep",
		     s->k->path, rel, s->L->sc->max_depth);
		s->failed = true;
		return;
	}
	d = ph_fs_opendir_beneath(s->k->dir, rel);
	if (d == NULL) {
		PROB(s->L, s->k->line, "skill '%s': cannot read directory %s: %s", s->k->path, abs,
		     strerror(errno));
		s->failed = true;
		return;
	}
	names = dir_names(d, &nn);
	for (size_t i = 0; i < nn && !s->failed; i++)
		walk_entry(s, d, abs, rel, names[i], depth);
	closedir(d);
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
	free(names);
}

static void
add_file(struct scan *s, const char *rel_disk, const char *abs, off_t size)
{
	struct ph_skill *k = s->k;
	struct ph_skill_file *f;
	size_t rl = strlen(rel_disk);
	const char *base = strrchr(rel_disk, '/');
	bool tmpl;
	char *served;
	base = base ? base + 1 : rel_disk;
	tmpl = strlen(base) > 5 && strcmp(rel_disk + rl - 5, ".tmpl") == 0;
	served = tmpl ? ph_xstrndup(rel_disk, rl - 5) : ph_xstrdup(rel_disk);
	if (tmpl && owned_by_nested(s, served)) {
		free(served);
		return;
	}
	for (size_t i = 0; i < k->nfiles; i++) {
		if (strcmp(k->files[i].rel, served) == 0) {
			PROB(s->L, k->line, "skill '%s': both %s and %s.tmpl exist", k->path, served,
			     served);
			s->failed = true;
			free(served);
			return;
		}
	}
	if ((long long)k->nfiles >= s->L->sc->max_files) {
		PROB(s->L, k->line, "skill '%s' has more than %lld files", k->path, s->L->sc->max_files);
		s->failed = true;
		free(served);
		return;
	}
	k->files = ph_xrealloc(k->files, (k->nfiles + 1) * sizeof *k->files);
	f = &k->files[k->nfiles++];
	memset(f, 0, sizeof *f);
	f->rel = served;
	f->disk = ph_xstrdup(abs);
	f->disk_rel = ph_xstrdup(rel_disk);
	f->tmpl = tmpl;
	f->skill_md = strcmp(served, "SKILL.md") == 0;
	f->mime = ph_mime_guess(served);
	s->bytes += (long long)size;
}

static int
file_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ph_skill_file *)a)->rel, ((const struct ph_skill_file *)b)->rel);
}

/* Offset just past the frontmatter's closing line, or 0 when there is none. */
static size_t
frontmatter_end(const char *t, size_t n)
{
	size_t i = 0;
	if (n >= 3 && memcmp(t, "\xEF\xBB\xBF", 3) == 0)
		i = 3;
	if (n - i < 4 || memcmp(t + i, "---", 3) != 0)
		return 0;
	while (i < n && t[i] != '\n')
		i++;
	while (i < n) {
		size_t ls = ++i, j;
		while (i < n && t[i] != '\n')
			i++;
		if (i - ls >= 3 && memcmp(t + ls, "---", 3) == 0) {
			for (j = ls + 3; j < i && (t[j] == ' ' || t[j] == '\t' || t[j] == '\r'); j++)
				;
			if (j == i)
				return i < n ? i + 1 : i;
		}
	}
	return 0;
}

/* Reads the templates (placeholders) and SKILL.md (frontmatter) of k. */
static void
check_files(struct scan *s)
{
	struct ph_skill *k = s->k;
	char **pnames = ph_xcalloc(k->nparams + 1, sizeof *pnames);
	bool have_md = false;
	for (size_t i = 0; i < k->nparams; i++)
		pnames[i] = k->params[i].name;
	for (size_t i = 0; i < k->nfiles; i++) {
		struct ph_skill_file *f = &k->files[i];
		char *src = NULL, *msg;
		size_t len = 0;
		int line = 0;
		if (!f->tmpl && !f->skill_md)
			continue;
		if (ph_read_file(f->disk, (size_t)s->L->sc->max_bytes, &src, &len) != 0) {
			PROB(s->L, k->line, "skill '%s': cannot read %s: %s", k->path, f->disk,
			     ph_strerror(errno));
			s->failed = true;
			continue;
		}
		if (f->tmpl) {
			msg = ph_skill_tmpl_check(src, len, pnames, k->nparams, &line, &f->uses_principal);
			if (msg != NULL) {
				PROB(s->L, k->line, "skill '%s': %s:%d: %s", k->path, f->disk, line, msg);
				free(msg);
				s->failed = true;
			}
		}
		if (f->skill_md) {
			char *err = NULL;
			struct json_object *fm;
			const char *why;
			have_md = true;
			if (f->tmpl) {
				size_t fe = frontmatter_end(src, len);
				for (size_t j = 0; j + 1 < fe; j++)
					if (src[j] == '{' && src[j + 1] == '{') {
						PROB(s->L, k->line, "skill '%s': %s: placeholders are only "
						     "allowed below the frontmatter", k->path, f->disk);
						s->failed = true;
						break;
					}
			}
			fm = ph_skill_frontmatter(src, len, s->L->yaml_depth, &err);
			if (fm == NULL) {
				PROB(s->L, k->line, "skill '%s': %s:%s", k->path, f->disk, err);
				free(err);
				s->failed = true;
			} else if ((why = ph_skill_fm_check(fm)) != NULL) {
				PROB(s->L, k->line, "skill '%s': %s: %s", k->path, f->disk, why);
				json_object_put(fm);
				s->failed = true;
			} else if (strcmp(json_object_get_string(json_object_object_get(fm, "name")),
					  k->segs[k->nsegs - 1]) != 0) {
				PROB(s->L, k->line, "skill '%s': %s: frontmatter name '%s' must equal the "
				     "last path segment '%s'", k->path, f->disk,
				     json_object_get_string(json_object_object_get(fm, "name")),
				     k->segs[k->nsegs - 1]);
				json_object_put(fm);
				s->failed = true;
			} else {
				k->fm = fm;
			}
		}
		free(src);
	}
	if (!have_md) {
		PROB(s->L, k->line, "skill '%s': %s has no SKILL.md (or SKILL.md.tmpl)", k->path, k->dir);
		s->failed = true;
	}
	free(pnames);
}

void
ph_skill_scan(struct lctx *L, size_t idx)
{
	struct ph_skills_conf *sc = L->sc;
	struct ph_skill *k = &sc->skills[idx];
	struct scan s;
	size_t dl = strlen(k->dir);
	memset(&s, 0, sizeof s);
	s.L = L;
	s.k = k;
	s.self = idx;
	/* each file belongs to the deepest skill whose directory holds it ... */
	for (size_t i = 0; i < sc->n; i++) {
		const char *od = sc->skills[i].dir;
		if (i != idx && od && od[0] && strncmp(od, k->dir, dl) == 0 && od[dl] == '/') {
			s.skip_dirs = ph_xrealloc(s.skip_dirs, (s.nskip_dirs + 1) * sizeof *s.skip_dirs);
			s.skip_dirs[s.nskip_dirs++] = sc->skills[i].dir;
		}
	}
	/* ... and the URI space below a nested skill is that skill's */
	for (size_t i = 0; i < k->ndesc; i++) {
		const struct ph_skill *d = &sc->skills[k->desc[i]];
		struct ph_buf b;
		ph_buf_init(&b);
		for (size_t j = k->nsegs; j < d->nsegs; j++) {
			if (j > k->nsegs)
				ph_buf_addc(&b, '/');
			ph_buf_adds(&b, d->segs[j]);
		}
		s.skip_rels = ph_xrealloc(s.skip_rels, (s.nskip_rels + 1) * sizeof *s.skip_rels);
		s.skip_rels[s.nskip_rels++] = ph_buf_steal(&b);
	}
	walk_dir(&s, k->dir, "", 1);
	if (!s.failed && s.bytes > L->sc->max_bytes) {
		PROB(L, k->line, "skill '%s' has more than %lld bytes of files", k->path, L->sc->max_bytes);
		s.failed = true;
	}
	if (!s.failed) {
		if (k->nfiles > 1)
			qsort(k->files, k->nfiles, sizeof *k->files, file_cmp);
		check_files(&s);
	}
	for (size_t i = 0; i < s.nskip_rels; i++)
		free(s.skip_rels[i]);
	free(s.skip_rels);
	free(s.skip_dirs);
}

static int
tree_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ph_tree_ent *)a)->rel, ((const struct ph_tree_ent *)b)->rel);
}

/* The tree of skill idx: its files and those of every nested skill, and
 * the limits over all of them. */
void
ph_skill_build_tree(struct lctx *L, size_t idx)
{
	struct ph_skills_conf *sc = L->sc;
	struct ph_skill *k = &sc->skills[idx];
	long long bytes = 0;
	size_t n = k->nfiles;
	for (size_t i = 0; i < k->ndesc; i++)
		n += sc->skills[k->desc[i]].nfiles;
	k->tree = ph_xcalloc(n ? n : 1, sizeof *k->tree);
	for (size_t i = 0; i <= k->ndesc; i++) {
		size_t o = i == 0 ? idx : k->desc[i - 1];
		struct ph_skill *d = &sc->skills[o];
		struct ph_buf pre;
		ph_buf_init(&pre);
		for (size_t j = k->nsegs; j < d->nsegs; j++) {
			ph_buf_adds(&pre, d->segs[j]);
			ph_buf_addc(&pre, '/');
		}
		for (size_t f = 0; f < d->nfiles; f++) {
			struct ph_tree_ent *e = &k->tree[k->ntree++];
			struct stat st;
			e->rel = ph_xasprintf("%s%s", pre.data ? pre.data : "", d->files[f].rel);
			e->owner = o;
			e->f = &d->files[f];
			if (stat(d->files[f].disk, &st) == 0)
				bytes += (long long)st.st_size;
		}
		ph_buf_free(&pre);
	}
	if (k->ntree > 1)
		qsort(k->tree, k->ntree, sizeof *k->tree, tree_cmp);
	if ((long long)k->ntree > sc->max_files) {
		PROB(L, k->line, "skill '%s' has more than %lld files with its nested skills", k->path,
		     sc->max_files);
	}
	if (bytes > sc->max_bytes) {
		PROB(L, k->line, "skill '%s' has more than %lld bytes of files", k->path, sc->max_bytes);
	}
}
