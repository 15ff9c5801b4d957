/* ph_skills.c: the skills extension at request time: skills/list,
 * skills/get, resources/read of skill:// files, resources/directory/read,
 * and the capability. Everything was loaded by ph_skill_load.c; here
 * requests are resolved against that index, files are read below their
 * skill directory only, templates are rendered and files digested (static
 * files once per worker, until they change).
 *
 * Presence: a skill is served to a request when the principal may see it
 * (it or a skill it is nested in is allowed) and its SKILL.md can be read
 * and still has valid frontmatter. A skill that is not served still owns
 * its directory: the files there are not its parent's. A request is served
 * by the deepest served skill on the route's chain, so a folder whose own
 * skill is absent but that holds a deeper served skill is listed by the
 * parent and readable as a directory, consistently. */
#include "first.h"
#include "ph_call.h"
#include "ph_features.h"
#include "ph_fs.h"
#include "ph_skills.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define EXT_ID "io.modelcontextprotocol/skills"

unsigned long ph_skills_hash_count;

/* ---- templates --------------------------------------------------------------- */

/* Parses a placeholder at s ("{{ name }}"). Returns its length and the
 * name's place, or 0 when s does not start one. */
static size_t
placeholder(const char *s, size_t n, size_t *noff, size_t *nlen)
{
	size_t i = 2;
	if (n < 4 || s[0] != '{' || s[1] != '{')
		return 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	*noff = i;
	if (i >= n || !((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || s[i] == '_'))
		return 0;
	while (i < n && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
			 (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
		i++;
	if (i - *noff == 7 && memcmp(s + *noff, "assigns", 7) == 0 && i + 1 < n && s[i] == '.') {
		/* {{assigns.NAME}}: one attribute of the principal */
		size_t at = ++i;
		while (i < n && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
				 (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-'))
			i++;
		if (i == at)
			return 0;
	}
	*nlen = i - *noff;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i + 1 >= n || s[i] != '}' || s[i + 1] != '}')
		return 0;
	return i + 2;
}

/* Which value a placeholder name stands for: a parameter index, -1 for the
 * principal, -3 for an attribute (assigns.NAME), -2 when unknown. */
static long
placeholder_value(const char *name, size_t len, char *const *pnames, size_t np)
{
	if (len > 8 && memcmp(name, "assigns.", 8) == 0)
		return -3;
	if ((len == 9 && memcmp(name, "principal", 9) == 0) || (len == 4 && memcmp(name, "user", 4) == 0))
		return -1;
	for (size_t i = 0; i < np; i++)
		if (strlen(pnames[i]) == len && memcmp(pnames[i], name, len) == 0)
			return (long)i;
	return -2;
}

char *
ph_skill_tmpl_check(const char *src, size_t len, char *const *pnames, size_t np, int *line,
		    bool *principal)
{
	int ln = 1;
	*principal = false;
	for (size_t i = 0; i < len; i++) {
		size_t noff, nlen, pl;
		if (src[i] == '\n')
			ln++;
		if (src[i] != '{' || i + 1 >= len || src[i + 1] != '{')
			continue;
		*line = ln;
		pl = placeholder(src + i, len - i, &noff, &nlen);
		if (pl == 0)
			return ph_xstrdup("'{{' does not start a {{name}} placeholder");
		switch (placeholder_value(src + i + noff, nlen, pnames, np)) {
		case -2:
			return ph_xasprintf("unknown placeholder {{%.*s}} (known: principal, user, "
					    "assigns.NAME and the path parameters)", (int)nlen, src + i + noff);
		case -1:
		case -3:
			*principal = true; /* rendered per principal */
			break;
		default:
			break;
		}
		i += pl - 1;
	}
	return NULL;
}

void
ph_skill_tmpl_render(struct ph_buf *out, const char *src, size_t len, char *const *pnames,
		     char *const *vals, size_t np, const char *principal, struct json_object *assigns)
{
	size_t lit = 0;
	for (size_t i = 0; i < len; i++) {
		size_t noff, nlen, pl;
		long v;
		if (src[i] != '{' || (pl = placeholder(src + i, len - i, &noff, &nlen)) == 0)
			continue;
		v = placeholder_value(src + i + noff, nlen, pnames, np);
		if (v == -2)
			continue;
		ph_buf_add(out, src + lit, i - lit);
		if (v == -1) {
			if (principal)
				ph_buf_adds(out, principal);
		} else if (v == -3) {
			const char *a = ph_assign_text(assigns, src + i + noff + 8, nlen - 8);
			if (a)
				ph_buf_adds(out, a);
		} else if (vals && vals[v]) {
			ph_buf_adds(out, vals[v]);
		}
		i += pl - 1;
		lit = i + 1;
	}
	ph_buf_add(out, src + lit, len - lit);
}

/* ---- reading below a skill directory ------------------------------------------- */

/* Reads a regular file opened as fd (closed here) up to max bytes. */
static int
read_fd(int fd, size_t max, struct ph_buf *out, struct stat *st)
{
	char chunk[16384];
	if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n < 0) {
			int e = errno;
			if (e == EINTR)
				continue;
			close(fd);
			errno = e;
			return -1;
		}
		if (n == 0)
			break;
		if (out->len + (size_t)n > max) {
			close(fd);
			errno = EFBIG;
			return -1;
		}
		ph_buf_add(out, chunk, (size_t)n);
	}
	close(fd);
	return 0;
}

static int
read_file(const struct ph_skills_conf *sc, const struct ph_skill *owner,
	  const struct ph_skill_file *f, struct ph_buf *out, struct stat *st)
{
	int fd = ph_fs_open_beneath(owner->dir, f->disk_rel);
	if (fd < 0)
		return -1;
	return read_fd(fd, (size_t)sc->max_bytes, out, st);
}

static bool
same_file(const struct ph_fcache *c, const struct stat *st)
{
	return c->valid && c->dev == st->st_dev && c->ino == st->st_ino && c->size == st->st_size &&
	       c->mtim.tv_sec == st->st_mtim.tv_sec && c->mtim.tv_nsec == st->st_mtim.tv_nsec &&
	       c->ctim.tv_sec == st->st_ctim.tv_sec && c->ctim.tv_nsec == st->st_ctim.tv_nsec;
}

/* Brings f's cache up to date with the file on disk: the digest of a static
 * file, the source of a template, the frontmatter of SKILL.md. A stat()
 * decides whether anything must be read. Returns 0, or -1 with errno
 * (EINVAL: SKILL.md no longer has valid frontmatter). */
static int
refresh(const struct ph_skills_conf *sc, const struct ph_skill *owner, struct ph_skill_file *f)
{
	struct ph_fcache *c = &f->c;
	struct stat st;
	struct ph_buf b;
	if (sc->digest_cache && stat(f->disk, &st) == 0 && same_file(c, &st))
		return 0;
	free(c->src);
	c->src = NULL;
	json_object_put(c->fm);
	c->fm = NULL;
	c->valid = false;
	ph_buf_init(&b);
	if (read_file(sc, owner, f, &b, &st) != 0) {
		int e = errno;
		ph_buf_free(&b);
		errno = e;
		return -1;
	}
	if ((off_t)b.len != st.st_size) {
		/* it changed while we read: serve nothing stale */
		ph_buf_free(&b);
		errno = EAGAIN;
		return -1;
	}
	if (f->skill_md) {
		char *err = NULL;
		const char *why = NULL;
		struct json_object *fm = ph_skill_frontmatter(b.data ? b.data : "", b.len, sc->yaml_depth, &err);
		if (fm == NULL || (why = ph_skill_fm_check(fm)) != NULL ||
		    strcmp(json_object_get_string(json_object_object_get(fm, "name")),
			   owner->segs[owner->nsegs - 1]) != 0) {
			ph_log("error", "skill '%s': %s: %s", owner->path, f->disk,
			       err ? err : why ? why : "frontmatter name differs from the path");
			free(err);
			json_object_put(fm);
			ph_buf_free(&b);
			errno = EINVAL;
			return -1;
		}
		c->fm = fm;
	}
	if (f->tmpl) {
		c->srclen = b.len;
		c->src = ph_buf_steal(&b);
	} else {
		crypto_hash_sha256(c->digest, (const unsigned char *)(b.data ? b.data : ""), b.len);
		ph_skills_hash_count++;
	}
	ph_buf_free(&b);
	c->dev = st.st_dev;
	c->ino = st.st_ino;
	c->size = st.st_size;
	c->mtim = st.st_mtim;
	c->ctim = st.st_ctim;
	c->valid = true;
	return 0;
}

static char **
param_names(const struct ph_skill *k, char **buf, size_t cap)
{
	for (size_t i = 0; i < k->nparams && i < cap; i++)
		buf[i] = k->params[i].name;
	return buf;
}

int
ph_skills_file_bytes(const struct ph_skills_conf *sc, const struct ph_skill *owner,
		     struct ph_skill_file *f, char *const *vals, const char *principal,
		     struct json_object *assigns, struct ph_buf *out)
{
	struct stat st;
	if (f->tmpl) {
		char *pn[PH_SKILL_MAX_SEGS];
		if (refresh(sc, owner, f) != 0)
			return -1;
		ph_skill_tmpl_render(out, f->c.src, f->c.srclen, param_names(owner, pn, PH_SKILL_MAX_SEGS),
				     vals, owner->nparams, principal, assigns);
		return 0;
	}
	return read_file(sc, owner, f, out, &st);
}

int
ph_skills_file_digest(const struct ph_skills_conf *sc, const struct ph_skill *owner,
		      struct ph_skill_file *f, char *const *vals, const char *principal,
		      struct json_object *assigns, unsigned char digest[32], size_t *size)
{
	if (refresh(sc, owner, f) != 0)
		return -1;
	if (f->tmpl) {
		struct ph_buf b;
		char *pn[PH_SKILL_MAX_SEGS];
		ph_buf_init(&b);
		ph_skill_tmpl_render(&b, f->c.src, f->c.srclen, param_names(owner, pn, PH_SKILL_MAX_SEGS),
				     vals, owner->nparams, principal, assigns);
		crypto_hash_sha256(digest, (const unsigned char *)(b.data ? b.data : ""), b.len);
		ph_skills_hash_count++;
		*size = b.len;
		ph_buf_free(&b);
		return 0;
	}
	memcpy(digest, f->c.digest, 32);
	*size = (size_t)f->c.size;
	return 0;
}

/* ---- the index ------------------------------------------------------------------- */

static bool
seg_is_param(const char *s)
{
	return s[0] == ':';
}

long
ph_skills_match(const struct ph_skills_conf *sc, char *const *segs, size_t n, size_t *used)
{
	for (size_t o = 0; o < sc->n; o++) {
		const struct ph_skill *k = &sc->skills[sc->match_order[o]];
		bool ok = k->nsegs <= n;
		for (size_t i = 0; ok && i < k->nsegs; i++) {
			if (!seg_is_param(k->segs[i])) {
				ok = strcmp(k->segs[i], segs[i]) == 0;
			} else {
				for (size_t p = 0; p < k->nparams; p++)
					if (k->params[p].seg == i)
						ok = k->params[p].re_ok &&
						     ph_utf8_valid(segs[i], strlen(segs[i])) &&
						     regexec(&k->params[p].re, segs[i], 0, NULL, 0) == 0;
			}
		}
		if (ok) {
			*used = k->nsegs;
			return (long)sc->match_order[o];
		}
	}
	return -1;
}

const struct ph_tree_ent *
ph_skills_tree_find(const struct ph_skill *k, const char *rel)
{
	size_t lo = 0, hi = k->ntree;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(k->tree[mid].rel, rel);
		if (c == 0)
			return &k->tree[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* ---- one request ------------------------------------------------------------------ */

enum { UNKNOWN = 0, YES, NO };

/* One file a dynamic skill's handler produced. */
struct dfile {
	char *rel;
	char *data;
	size_t len;
};

/* What a dynamic skill's handler produced for this request. */
struct dyn {
	char *key;      /* the parameter values it ran with */
	bool ok;        /* served */
	bool failed;    /* not served because the handler failed (not: said "no skill") */
	struct dfile *files; /* sorted by rel */
	size_t n;
	struct json_object *fm;
};

struct rq {
	struct ph_req *r;
	struct ph_skills_conf *sc;
	unsigned char *vis;     /* per skill: visible to the principal */
	unsigned char *present; /* per static skill: visible and its SKILL.md is good */
	struct dyn **dyn;       /* per dynamic skill: its handler's answer */
};

static void
rq_init(struct rq *q, struct ph_req *r)
{
	size_t n = r->srv->conf->skills->n ? r->srv->conf->skills->n : 1;
	q->r = r;
	q->sc = r->srv->conf->skills;
	q->vis = ph_xcalloc(n, 1);
	q->present = ph_xcalloc(n, 1);
	q->dyn = ph_xcalloc(n, sizeof *q->dyn);
}

static void
dyn_free(struct dyn *d)
{
	if (d == NULL)
		return;
	for (size_t i = 0; i < d->n; i++) {
		free(d->files[i].rel);
		free(d->files[i].data);
	}
	free(d->files);
	json_object_put(d->fm);
	free(d->key);
	free(d);
}

static void
rq_free(struct rq *q)
{
	for (size_t i = 0; i < q->sc->n; i++)
		dyn_free(q->dyn[i]);
	free(q->dyn);
	free(q->vis);
	free(q->present);
}

static bool
visible(struct rq *q, size_t k)
{
	const struct ph_skill *s = &q->sc->skills[k];
	if (q->vis[k] == UNKNOWN) {
		/* a skill it is nested in grants it */
		bool v = ph_access_allowed(q->r, PH_KIND_SKILL, s->path);
		for (size_t i = 0; !v && i < s->nanc; i++)
			v = ph_access_allowed(q->r, PH_KIND_SKILL, q->sc->skills[s->anc[i]].path);
		q->vis[k] = v ? YES : NO;
	}
	return q->vis[k] == YES;
}

static struct ph_skill_file *
skill_md(struct ph_skill *k)
{
	for (size_t i = 0; i < k->nfiles; i++)
		if (k->files[i].skill_md)
			return &k->files[i];
	return NULL;
}

static void base_uri(struct ph_buf *b, const struct ph_skill *k, char *const *vals);

/* A path a dynamic handler may name: segments that are not empty, ".",
 * "..", hidden, and hold no backslash, control character or invalid UTF-8. */
static bool
dyn_rel_ok(const char *rel, size_t len)
{
	const char *p = rel, *end = rel + len;
	if (len == 0 || !ph_utf8_valid(rel, len))
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)rel[i] < 0x20 || rel[i] == 0x7f || rel[i] == '\\')
			return false;
	while (p < end) {
		const char *slash = memchr(p, '/', (size_t)(end - p));
		size_t n = slash ? (size_t)(slash - p) : (size_t)(end - p);
		if (n == 0 || p[0] == '.')
			return false;
		if (slash == NULL)
			break;
		p = slash + 1;
		if (p == end)
			return false;
	}
	return true;
}

static int
dfile_cmp(const void *a, const void *b)
{
	return strcmp(((const struct dfile *)a)->rel, ((const struct dfile *)b)->rel);
}

/* Reads the handler's answer {files: {path: text | {blob: base64}} | null}
 * into d. Returns NULL, or why it is not a skill (for the log). */
static const char *
dyn_take(struct rq *q, const struct ph_skill *k, struct json_object *res, struct dyn *d)
{
	struct json_object *files = ph_jget(res, "files");
	long long total = 0;
	char *err = NULL;
	const char *why;
	if (files == NULL || json_object_is_type(files, json_type_null))
		return ""; /* no skill here for this request */
	if (!json_object_is_type(files, json_type_object))
		return "'files' must be an object of path: content";
	d->files = ph_xcalloc((size_t)json_object_object_length(files) + 1, sizeof *d->files);
	json_object_object_foreach(files, rel, v) {
		struct dfile *f = &d->files[d->n];
		if (!dyn_rel_ok(rel, strlen(rel)))
			return "a file path is empty, hidden, has '.' or '..' segments or invalid characters";
		if (json_object_is_type(v, json_type_string)) {
			f->len = (size_t)json_object_get_string_len(v);
			f->data = ph_xstrndup(json_object_get_string(v), f->len);
		} else {
			const char *b64 = ph_jstr(v, "blob");
			unsigned char *bin;
			if (b64 == NULL || ph_base64_decode(b64, strlen(b64), &bin, &f->len) != 0)
				return "a file must be a string or {\"blob\": base64}";
			f->data = ph_xstrndup((const char *)bin, f->len);
			free(bin);
		}
		f->rel = ph_xstrdup(rel);
		d->n++;
		total += (long long)f->len;
	}
	if ((long long)d->n > q->sc->max_files || total > q->sc->max_bytes)
		return "more files or bytes than skills.max_files / skills.max_bytes";
	if (d->n > 1)
		qsort(d->files, d->n, sizeof *d->files, dfile_cmp);
	for (size_t i = 0; i < d->n; i++) {
		if (strcmp(d->files[i].rel, "SKILL.md") != 0)
			continue;
		d->fm = ph_skill_frontmatter(d->files[i].data, d->files[i].len, q->sc->yaml_depth, &err);
		if (d->fm == NULL) {
			ph_log("error", "skill '%s': SKILL.md: %s", k->path, err);
			free(err);
			return "SKILL.md has no valid frontmatter";
		}
		if ((why = ph_skill_fm_check(d->fm)) != NULL)
			return why;
		if (strcmp(json_object_get_string(json_object_object_get(d->fm, "name")),
			   k->segs[k->nsegs - 1]) != 0)
			return "the frontmatter name differs from the last path segment";
		return NULL;
	}
	return "no SKILL.md among the files";
}

/* Runs dynamic skill k's handler once per request and parameter values. */
static struct dyn *
dyn_run(struct rq *q, size_t k, char *const *vals)
{
	const struct ph_skill *s = &q->sc->skills[k];
	struct ph_buf key, uri;
	struct dyn *d;
	struct json_object *args, *extra, *res;
	struct ph_invocation inv;
	char *label;
	const char *why;
	ph_buf_init(&key);
	for (size_t p = 0; p < s->nparams; p++) {
		ph_buf_adds(&key, vals[p]);
		ph_buf_addc(&key, '\x1f');
	}
	if (key.data == NULL)
		ph_buf_adds(&key, "");
	if (q->dyn[k] != NULL && strcmp(q->dyn[k]->key, key.data) == 0) {
		ph_buf_free(&key);
		return q->dyn[k];
	}
	dyn_free(q->dyn[k]);
	d = q->dyn[k] = ph_xcalloc(1, sizeof *d);
	d->key = ph_buf_steal(&key);
	args = json_object_new_object();
	for (size_t p = 0; p < s->nparams; p++)
		json_object_object_add(args, s->params[p].name, json_object_new_string(vals[p]));
	extra = json_object_new_object();
	json_object_object_add(extra, "path", json_object_new_string(s->path));
	ph_buf_init(&uri);
	base_uri(&uri, s, vals);
	ph_buf_adds(&uri, "/SKILL.md");
	label = ph_xasprintf("skill %s", s->path);
	memset(&inv, 0, sizeof inv);
	inv.kind = "skill";
	inv.label = label;
	inv.uri = uri.data;
	inv.arguments = args;
	inv.extra = extra;
	res = ph_call_handler(q->r, &s->h, &inv);
	if (res == NULL) {
		d->failed = true; /* the runner logged why */
	} else if (ph_jget(res, "inputRequired") != NULL) {
		ph_log("warning", "%s: a skill handler cannot ask for client input", label);
		d->failed = true;
	} else if ((why = dyn_take(q, s, res, d)) != NULL) {
		if (why[0] != '\0') {
			ph_log("error", "%s: %s", label, why);
			d->failed = true;
		}
	} else {
		d->ok = true;
	}
	json_object_put(res);
	json_object_put(args);
	json_object_put(extra);
	ph_buf_free(&uri);
	free(label);
	return d;
}

/* Whether skill k is served to this request with parameter values vals. */
static bool
present(struct rq *q, size_t k, char *const *vals)
{
	struct ph_skill *s = &q->sc->skills[k];
	if (s->dynamic)
		return visible(q, k) && dyn_run(q, k, vals)->ok;
	if (q->present[k] == UNKNOWN) {
		struct ph_skill_file *md = skill_md(s);
		bool ok = visible(q, k) && md != NULL;
		if (ok && refresh(q->sc, s, md) != 0) {
			if (errno != ENOENT && errno != EINVAL)
				ph_log("warning", "skill '%s': cannot read %s: %s", s->path, md->disk,
				       ph_fs_strerror(errno));
			ok = false;
		}
		q->present[k] = ok ? YES : NO;
	}
	return q->present[k] == YES;
}

/* The frontmatter of present skill k (borrowed). */
static struct json_object *
frontmatter(struct rq *q, size_t k)
{
	struct ph_skill *s = &q->sc->skills[k];
	struct ph_skill_file *md;
	if (s->dynamic)
		return q->dyn[k] ? q->dyn[k]->fm : NULL;
	md = skill_md(s);
	return md ? md->c.fm : NULL;
}

/* A file of dynamic skill k (present), or NULL. */
static const struct dfile *
dyn_find(struct rq *q, size_t k, const char *rel)
{
	const struct dyn *d = q->dyn[k];
	size_t lo = 0, hi = d ? d->n : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(d->files[mid].rel, rel);
		if (c == 0)
			return &d->files[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Appends skill://<concrete path of k> to b. */
static void
base_uri(struct ph_buf *b, const struct ph_skill *k, char *const *vals)
{
	ph_buf_adds(b, "skill://");
	for (size_t i = 0; i < k->nsegs; i++) {
		const char *seg = k->segs[i];
		if (i)
			ph_buf_addc(b, '/');
		if (seg_is_param(seg))
			for (size_t p = 0; p < k->nparams; p++)
				if (k->params[p].seg == i)
					seg = vals[p];
		ph_skill_uri_encode(b, seg, strlen(seg));
	}
}

static char *
file_uri(const struct ph_skill *k, char *const *vals, const char *rel)
{
	struct ph_buf b;
	ph_buf_init(&b);
	base_uri(&b, k, vals);
	if (rel[0]) {
		ph_buf_addc(&b, '/');
		ph_skill_uri_encode_path(&b, rel);
	}
	return ph_buf_steal(&b);
}

/* A URI resolved to the skill that serves it. */
struct loc {
	bool failed;    /* the route's own skill is dynamic and its handler failed */
	char **segs;
	size_t nsegs;
	size_t skill;   /* the deepest served skill on the route's chain */
	char **vals;    /* its parameter values (point into segs) */
	char *rel;      /* the rest of the path, "" for the skill root */
};

static void
loc_free(struct loc *l)
{
	bool failed = l->failed;
	ph_skill_segs_free(l->segs, l->nsegs);
	free(l->vals);
	free(l->rel);
	memset(l, 0, sizeof *l);
	l->failed = failed;
}

/* True when dynamic skill k was run for this request and its handler failed. */
static bool
dyn_failed(struct rq *q, size_t k)
{
	return q->sc->skills[k].dynamic && q->dyn[k] != NULL && q->dyn[k]->failed;
}

/* Resolves a canonical skill:// URI. Returns 0, or -1 when no served skill
 * covers it (which callers report as "not served", never in detail). */
static int
resolve(struct rq *q, const char *uri, size_t len, struct loc *l)
{
	int n;
	size_t used;
	long m;
	const struct ph_skill *k;
	struct ph_buf rel;
	memset(l, 0, sizeof *l);
	n = ph_skill_uri_split(uri, len, &l->segs);
	if (n < 0)
		return -1;
	l->nsegs = (size_t)n;
	m = ph_skills_match(q->sc, l->segs, l->nsegs, &used);
	if (m < 0)
		goto fail;
	k = &q->sc->skills[m];
	/* the skills a route is nested in have the same parameters at the
	 * same places, so one set of values serves the whole chain */
	l->vals = ph_xcalloc(k->nparams + 1, sizeof *l->vals);
	for (size_t p = 0; p < k->nparams; p++)
		l->vals[p] = l->segs[k->params[p].seg];
	if (present(q, (size_t)m, l->vals)) {
		l->skill = (size_t)m;
	} else {
		l->failed = dyn_failed(q, (size_t)m);
		size_t i;
		for (i = 0; i < k->nanc && !present(q, k->anc[i], l->vals); i++)
			;
		if (i == k->nanc)
			goto fail;
		l->skill = k->anc[i];
	}
	k = &q->sc->skills[l->skill];
	ph_buf_init(&rel);
	for (size_t i = k->nsegs; i < l->nsegs; i++) {
		if (i > k->nsegs)
			ph_buf_addc(&rel, '/');
		ph_buf_adds(&rel, l->segs[i]);
	}
	l->rel = ph_buf_steal(&rel);
	return 0;
fail:
	loc_free(l);
	return -1;
}

/* Caching hints combined over a set of skills (phantom-behaviour §1.9). */
struct hints {
	size_t n;
	long long ttl;
	bool pub;
};

static void
hints_init(struct hints *h)
{
	h->n = 0;
	h->ttl = LLONG_MAX;
	h->pub = true;
}

static void
hints_add(struct hints *h, const struct ph_skill *k)
{
	h->n++;
	if (!k->has_cache) {
		h->ttl = 0;
		h->pub = false;
		return;
	}
	if (k->ttl_ms < h->ttl)
		h->ttl = k->ttl_ms;
	if (!k->pub)
		h->pub = false;
}

static void
hints_put(struct rq *q, const struct hints *h, struct json_object *res)
{
	bool pub = h->n > 0 && h->pub && !ph_access_restricted(q->r);
	json_object_object_add(res, "ttlMs", json_object_new_int64(h->n > 0 ? h->ttl : 0));
	json_object_object_add(res, "cacheScope", json_object_new_string(pub ? "public" : "private"));
}

/* Adds the hints of skill k's tree as served to this request: k and every
 * present nested skill; a template that names the principal makes it
 * private. */
static void
tree_hints(struct rq *q, size_t k, char *const *vals, struct hints *h)
{
	const struct ph_skill *s = &q->sc->skills[k];
	hints_add(h, s);
	for (size_t i = 0; i < s->nfiles; i++)
		if (s->files[i].uses_principal)
			h->pub = false;
	for (size_t i = 0; i < s->ndesc; i++) {
		const struct ph_skill *d = &q->sc->skills[s->desc[i]];
		if (!present(q, s->desc[i], vals))
			continue;
		hints_add(h, d);
		for (size_t j = 0; j < d->nfiles; j++)
			if (d->files[j].uses_principal)
				h->pub = false;
	}
}

static bool
ent_served(struct rq *q, size_t serving, const struct ph_tree_ent *e, char *const *vals)
{
	return e->owner == serving || present(q, e->owner, vals);
}

/* True when k or a skill served below it is dynamic: its entry then lists
 * "dynamic" instead of files. */
static bool
tree_dynamic(struct rq *q, size_t k, char *const *vals)
{
	const struct ph_skill *s = &q->sc->skills[k];
	if (s->dynamic)
		return true;
	for (size_t i = 0; i < s->ndesc; i++)
		if (q->sc->skills[s->desc[i]].dynamic && present(q, s->desc[i], vals))
			return true;
	return false;
}

static void
hex_digest(char out[72], const unsigned char d[32])
{
	static const char hex[] = "0123456789abcdef";
	memcpy(out, "sha256:", 7);
	for (int i = 0; i < 32; i++) {
		out[7 + 2 * i] = hex[d[i] >> 4];
		out[8 + 2 * i] = hex[d[i] & 15];
	}
	out[71] = '\0';
}

/* The skill entry of present skill k with parameter values vals. Returns
 * it (caller puts) and adds to h, or NULL with *e set (PH_E_PARAMS when the
 * skill is not served, PH_E_HANDLER when it cannot be: over the limits). */
static struct json_object *
skill_entry(struct rq *q, size_t k, char *const *vals, struct hints *h, enum ph_err *e)
{
	struct ph_skill *s = &q->sc->skills[k];
	struct json_object *o, *res, *fm;
	char *uri;
	long long total = 0;
	size_t count = 0;
	if (!present(q, k, vals)) {
		/* a dynamic handler that failed is an error; no skill is "not served" */
		*e = dyn_failed(q, k) ? PH_E_HANDLER : PH_E_PARAMS;
		return NULL;
	}
	for (size_t i = 0; i < s->ndesc; i++) {
		/* so is one nested in it (phantom-behaviour §1.4) */
		if (q->sc->skills[s->desc[i]].dynamic && !present(q, s->desc[i], vals) &&
		    dyn_failed(q, s->desc[i])) {
			*e = PH_E_HANDLER;
			return NULL;
		}
	}
	if (tree_dynamic(q, k, vals)) {
		res = json_object_new_string("dynamic");
	} else {
		res = json_object_new_array();
		for (size_t i = 0; i < s->ntree; i++) {
			const struct ph_tree_ent *t = &s->tree[i];
			const struct ph_skill *owner = &q->sc->skills[t->owner];
			unsigned char d[32];
			char hex[72];
			size_t size;
			struct json_object *ent;
			if (!ent_served(q, k, t, vals))
				continue;
			if (ph_skills_file_digest(q->sc, owner, t->f, vals, q->r->principal, q->r->assigns, d,
						  &size) != 0) {
				ph_log("warning", "skill '%s': %s is not served: %s", s->path, t->f->disk,
				       ph_fs_strerror(errno));
				continue;
			}
			count++;
			total += (long long)size;
			hex_digest(hex, d);
			ent = json_object_new_object();
			uri = file_uri(s, vals, t->rel);
			json_object_object_add(ent, "uri", json_object_new_string(uri));
			free(uri);
			json_object_object_add(ent, "digest", json_object_new_string(hex));
			json_object_object_add(ent, "size", json_object_new_int64((int64_t)size));
			json_object_array_add(res, ent);
		}
	}
	fm = frontmatter(q, k);
	if (fm == NULL) {
		/* SKILL.md changed into something invalid while this entry was built */
		json_object_put(res);
		*e = PH_E_PARAMS;
		return NULL;
	}
	if ((long long)count > q->sc->max_files || total > q->sc->max_bytes) {
		ph_log("error", "skill '%s' can't be served: more than %lld files or %lld bytes",
		       s->path, q->sc->max_files, q->sc->max_bytes);
		json_object_put(res);
		*e = PH_E_HANDLER;
		return NULL;
	}
	o = json_object_new_object();
	uri = file_uri(s, vals, "SKILL.md");
	json_object_object_add(o, "uri", json_object_new_string(uri));
	free(uri);
	json_object_object_add(o, "frontmatter", json_object_get(fm));
	json_object_object_add(o, "resources", res);
	tree_hints(q, k, vals, h);
	return o;
}

/* The uri parameter as a string without NUL, or NULL. */
static const char *
uri_param(struct ph_req *r, size_t *len)
{
	struct json_object *u = ph_jget(r->params, "uri");
	const char *s;
	if (u == NULL || !json_object_is_type(u, json_type_string))
		return NULL;
	s = json_object_get_string(u);
	*len = (size_t)json_object_get_string_len(u);
	return s;
}

static void
uri_required(struct ph_outcome *o)
{
	struct json_object *d = json_object_new_object();
	json_object_object_add(d, "uri", json_object_new_string("is required"));
	ph_outcome_error(o, PH_E_PARAMS, d, "Invalid params: uri is required");
}

/* ---- methods ------------------------------------------------------------------------ */

bool
ph_skills_configured(const struct ph_server *s)
{
	return s->conf->skills != NULL;
}

/* The values of one listed item: a plain value for a one-parameter path,
 * or an object of parameter -> value. Returns them (caller frees with
 * vals_free) when every parameter has a value its pattern accepts, else
 * NULL with why. */
static char **
list_item_vals(const struct ph_skill *k, struct json_object *it, char *why, size_t wsz)
{
	char **vals = ph_xcalloc(k->nparams + 1, sizeof *vals);
	for (size_t p = 0; p < k->nparams; p++) {
		const char *v = json_object_is_type(it, json_type_string) && k->nparams == 1
					? json_object_get_string(it) : ph_jstr(it, k->params[p].name);
		if (v == NULL || *v == '\0' || strchr(v, '/') || strcmp(v, ".") == 0 || strcmp(v, "..") == 0 ||
		    !ph_utf8_valid(v, strlen(v)) || !k->params[p].re_ok ||
		    regexec(&k->params[p].re, v, 0, NULL, 0) != 0) {
			snprintf(why, wsz, "no value of '%s' that its pattern accepts", k->params[p].name);
			for (size_t j = 0; j < p; j++)
				free(vals[j]);
			free(vals);
			return NULL;
		}
		vals[p] = ph_xstrdup(v);
	}
	return vals;
}

static void
vals_free(char **vals)
{
	for (size_t i = 0; vals && vals[i]; i++)
		free(vals[i]);
	free(vals);
}

/* One line of this request's listing: a skill and its values (borrowed
 * from the configuration, or owned when a list handler gave them). */
struct line {
	size_t skill;
	char **vals;
	bool owned;
};

/* Runs skill k's list handler: {kind: "skill_list", name: path, principal,
 * assigns, ...} -> {"list": [value | {param: value}, ...]}, appending a line
 * per good item to *ls. A bad item is logged and skipped. Returns false
 * when the handler failed or its answer has no "list" array. */
static bool
list_run(struct rq *q, size_t k, struct line **ls, size_t *n)
{
	const struct ph_skill *s = &q->sc->skills[k];
	struct json_object *args = json_object_new_object(), *res, *arr;
	struct ph_invocation inv;
	char label[300], why[160];
	bool ok = false;
	snprintf(label, sizeof label, "skill %s: list", s->path);
	memset(&inv, 0, sizeof inv);
	inv.kind = "skill_list";
	inv.label = label;
	inv.name = s->path;
	inv.arguments = args;
	res = ph_call_handler(q->r, &s->list_h, &inv);
	arr = ph_jget(res, "list");
	if (res != NULL && !json_object_is_type(arr, json_type_array))
		ph_log("warning", "%s: the answer has no \"list\" array", label);
	if (json_object_is_type(arr, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(arr); i++) {
			char **vals = list_item_vals(s, json_object_array_get_idx(arr, i), why, sizeof why);
			if (vals == NULL) {
				ph_log("warning", "%s: item %zu skipped: %s", label, i, why);
				continue;
			}
			*ls = ph_xrealloc(*ls, (*n + 1) * sizeof **ls);
			(*ls)[(*n)++] = (struct line){k, vals, true};
		}
		ok = true;
	}
	json_object_put(res);
	json_object_put(args);
	return ok;
}

static void
lines_free(struct line *vis, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (vis[i].owned)
			vals_free(vis[i].vals);
	free(vis);
}

/* This request's listing: the configured one, then what each list handler
 * gives this principal, under the skill allow-lists, into *vis (*n lines;
 * caller frees with lines_free); *asked says whether a handler ran. Returns
 * 0, or -1 with o set (what: the method) when a list handler failed. */
static int
lines_collect(struct rq *q, const char *what, struct line **vis, size_t *n, bool *asked,
	      struct ph_outcome *o)
{
	*vis = NULL;
	*n = 0;
	*asked = false;
	for (size_t i = 0; i < q->sc->nlisting; i++) {
		if (!visible(q, q->sc->listing[i].skill))
			continue;
		*vis = ph_xrealloc(*vis, (*n + 1) * sizeof **vis);
		(*vis)[(*n)++] = (struct line){q->sc->listing[i].skill, q->sc->listing[i].vals, false};
	}
	for (size_t k = 0; k < q->sc->n; k++) {
		if (q->sc->skills[k].list_h.kind == PH_HANDLER_NONE || !visible(q, k))
			continue;
		if (!list_run(q, k, vis, n)) {
			ph_outcome_error(o, PH_E_HANDLER, NULL, "%s: the list of '%s' failed", what,
					 q->sc->skills[k].path);
			return -1;
		}
		*asked = true;
	}
	return 0;
}

/* The SKILL.md files of a request's listing (resources/list). */
struct ph_skill_files {
	struct rq q;
	struct line *vis;
	size_t n;
};

int
ph_skills_files(struct ph_req *r, struct ph_skill_files **fp, size_t *n, bool *per_principal,
		struct ph_outcome *o)
{
	struct ph_skill_files *f;
	*fp = NULL;
	*n = 0;
	*per_principal = false;
	if (r->srv->conf->skills == NULL)
		return 0;
	f = ph_xcalloc(1, sizeof *f);
	rq_init(&f->q, r);
	if (lines_collect(&f->q, "resources/list", &f->vis, &f->n, per_principal, o) != 0) {
		ph_skills_files_free(f);
		return -1;
	}
	*fp = f;
	*n = f->n;
	return 0;
}

void
ph_skills_files_page(struct ph_skill_files *f, size_t off, size_t max, struct json_object *arr)
{
	for (size_t i = off; f != NULL && i < f->n && i - off < max; i++) {
		const struct line *l = &f->vis[i];
		struct ph_skill *k = &f->q.sc->skills[l->skill];
		struct json_object *fm, *e;
		const char *name, *desc;
		char *uri;
		if (!present(&f->q, l->skill, l->vals))
			continue; /* missing or bad: left out, as skills/list does */
		fm = frontmatter(&f->q, l->skill);
		name = ph_jstr(fm, "name");
		desc = ph_jstr(fm, "description");
		uri = file_uri(k, l->vals, "SKILL.md");
		e = json_object_new_object();
		json_object_object_add(e, "uri", json_object_new_string(uri));
		json_object_object_add(e, "name", json_object_new_string(name ? name : k->segs[k->nsegs - 1]));
		if (desc)
			json_object_object_add(e, "description", json_object_new_string(desc));
		json_object_object_add(e, "mimeType", json_object_new_string("text/markdown"));
		json_object_array_add(arr, e);
		free(uri);
	}
}

void
ph_skills_files_key(const struct ph_skill_files *f, size_t i, struct ph_buf *b)
{
	const struct line *l = &f->vis[i];
	char *uri = file_uri(&f->q.sc->skills[l->skill], l->vals, "SKILL.md");
	ph_buf_adds(b, uri);
	free(uri);
}

void
ph_skills_files_free(struct ph_skill_files *f)
{
	if (f == NULL)
		return;
	lines_free(f->vis, f->n);
	rq_free(&f->q);
	free(f);
}

void
ph_skills_list(struct ph_req *r, struct ph_outcome *o)
{
	struct rq q;
	struct hints h;
	size_t nvis = 0, off, cnt;
	struct line *vis = NULL;
	bool complete = true, asked = false;
	struct json_object *skills;
	rq_init(&q, r);
	if (lines_collect(&q, "skills/list", &vis, &nvis, &asked, o) != 0 ||
	    ph_page_begin(r, nvis, &off, o) != 0)
		goto out;
	cnt = ph_page_count(r, nvis, off);
	hints_init(&h);
	skills = json_object_new_array();
	for (size_t i = off; i < off + cnt; i++) {
		const struct line *l = &vis[i];
		enum ph_err e;
		struct json_object *ent = skill_entry(&q, l->skill, l->vals, &h, &e);
		if (ent == NULL) {
			complete = false; /* left out; the page is not cacheable */
			continue;
		}
		json_object_array_add(skills, ent);
	}
	o->result = json_object_new_object();
	json_object_object_add(o->result, "skills", skills);
	ph_page_end(r, o->result, off, cnt, nvis);
	if (!complete || asked)
		h.n = 0; /* left-out entries, or a listing made for this principal: not reusable */
	hints_put(&q, &h, o->result);
out:
	lines_free(vis, nvis);
	rq_free(&q);
}

void
ph_skills_get(struct ph_req *r, struct ph_outcome *o)
{
	struct rq q;
	struct loc l;
	struct hints h;
	size_t len;
	const char *uri = uri_param(r, &len);
	enum ph_err e = PH_E_PARAMS;
	struct json_object *ent = NULL;
	if (uri == NULL) {
		uri_required(o);
		return;
	}
	r->target = uri;
	rq_init(&q, r);
	hints_init(&h);
	if (resolve(&q, uri, len, &l) == 0) {
		if (strcmp(l.rel, "SKILL.md") == 0)
			ent = skill_entry(&q, l.skill, l.vals, &h, &e);
		loc_free(&l);
	}
	if (ent == NULL && l.failed)
		e = PH_E_HANDLER;
	if (ent != NULL) {
		o->result = json_object_new_object();
		json_object_object_add(o->result, "skill", ent);
		hints_put(&q, &h, o->result);
	} else if (e == PH_E_HANDLER) {
		ph_outcome_error(o, PH_E_HANDLER, NULL, "Internal error");
	} else {
		ph_outcome_error(o, PH_E_PARAMS, NULL, "No skill is served at %s", uri);
	}
	rq_free(&q);
}

const struct ph_auth_scopes *
ph_skills_scopes(struct ph_req *r, const char *uri)
{
	struct rq q;
	char **segs = NULL;
	int n;
	size_t used;
	long m = -1;
	if (r->srv->conf->skills == NULL || (n = ph_skill_uri_split(uri, strlen(uri), &segs)) < 0)
		return NULL;
	rq_init(&q, r);
	/* the deepest route, as resolve() takes it, without running a
	 * dynamic skill's handler: the call itself does that */
	if ((m = ph_skills_match(q.sc, segs, (size_t)n, &used)) >= 0 && !visible(&q, (size_t)m))
		m = -1;
	ph_skill_segs_free(segs, (size_t)n);
	rq_free(&q);
	return m >= 0 ? &r->srv->conf->skills->skills[m].need : NULL;
}

/* The contents entry of a read: text when the bytes are UTF-8, else a blob. */
static struct json_object *
contents(const char *uri, const char *mime, const char *data, size_t len)
{
	struct json_object *c = json_object_new_object(), *arr = json_object_new_array();
	json_object_object_add(c, "uri", json_object_new_string(uri));
	json_object_object_add(c, "mimeType", json_object_new_string(mime));
	if (ph_utf8_valid(data, len)) {
		json_object_object_add(c, "text", json_object_new_string_len(data, (int)len));
	} else {
		char *enc = ph_base64(data, len);
		json_object_object_add(c, "blob", json_object_new_string(enc));
		free(enc);
	}
	json_object_array_add(arr, c);
	return arr;
}

void
ph_skills_read(struct ph_req *r, const char *uri, struct ph_outcome *o)
{
	struct rq q;
	struct loc l;
	size_t len;
	const char *u = uri_param(r, &len);
	const struct ph_skill *s;
	struct hints h;
	if (u == NULL || strlen(uri) != len || r->srv->conf->skills == NULL) {
		ph_outcome_not_found(r, o, uri);
		return;
	}
	rq_init(&q, r);
	if (resolve(&q, u, len, &l) != 0) {
		ph_outcome_not_found(r, o, uri);
		rq_free(&q);
		return;
	}
	s = &q.sc->skills[l.skill];
	hints_init(&h);
	if (s->dynamic) {
		const struct dfile *f = l.rel[0] ? dyn_find(&q, l.skill, l.rel) : NULL;
		if (f == NULL) {
			ph_outcome_not_found(r, o, uri);
		} else {
			o->result = json_object_new_object();
			json_object_object_add(o->result, "contents",
					       contents(uri, ph_mime_guess(f->rel), f->data, f->len));
			hints_add(&h, s);
			hints_put(&q, &h, o->result);
		}
	} else {
		const struct ph_tree_ent *t = l.rel[0] ? ph_skills_tree_find(s, l.rel) : NULL;
		struct ph_buf b;
		ph_buf_init(&b);
		if (t == NULL || !ent_served(&q, l.skill, t, l.vals) ||
		    ph_skills_file_bytes(q.sc, &q.sc->skills[t->owner], t->f, l.vals, r->principal, r->assigns,
					 &b) != 0) {
			if (t != NULL && errno != ENOENT)
				ph_log("warning", "skill file %s is not served: %s", t->f->disk, ph_fs_strerror(errno));
			ph_outcome_not_found(r, o, uri);
		} else {
			o->result = json_object_new_object();
			json_object_object_add(o->result, "contents",
					       contents(uri, t->f->mime, b.data ? b.data : "", b.len));
			hints_add(&h, &q.sc->skills[t->owner]);
			if (t->f->uses_principal)
				h.pub = false;
			hints_put(&q, &h, o->result);
		}
		ph_buf_free(&b);
	}
	loc_free(&l);
	rq_free(&q);
}

enum ph_sub_kind
ph_skills_watch(struct ph_req *r, const char *uri, char **path)
{
	struct rq q;
	struct loc l;
	enum ph_sub_kind w = PH_SUB_NONE;
	*path = NULL;
	if (r->srv->conf->skills == NULL)
		return PH_SUB_NONE;
	rq_init(&q, r);
	if (resolve(&q, uri, strlen(uri), &l) == 0) {
		const struct ph_skill *s = &q.sc->skills[l.skill];
		const struct ph_tree_ent *t = NULL;
		if (s->dynamic)
			w = PH_SUB_OTHER; /* its handler makes the files */
		else if (l.rel[0] && (t = ph_skills_tree_find(s, l.rel)) != NULL &&
			 ent_served(&q, l.skill, t, l.vals)) {
			*path = ph_xstrdup(t->f->disk);
			w = PH_SUB_FILE;
		}
		loc_free(&l);
	}
	rq_free(&q);
	return w;
}

/* A direct child of the directory being read. */
struct child {
	const char *name; /* borrowed */
	size_t nlen;
	bool dir;
	const char *mime;
	struct json_object *fm; /* a skill's own SKILL.md: its frontmatter (borrowed) */
};

static int
child_cmp(const void *a, const void *b)
{
	const struct child *x = a, *y = b;
	size_t n = x->nlen < y->nlen ? x->nlen : y->nlen;
	int c = memcmp(x->name, y->name, n);
	if (c != 0)
		return c;
	return x->nlen < y->nlen ? -1 : x->nlen > y->nlen;
}

struct children {
	struct child *v;
	size_t n;
	const char *dir; /* the directory read, below the skill root ("" for the root) */
	size_t dlen;
};

/* Adds the child of ch->dir that the file at rel lies in (if it does). */
static void
add_child(struct children *ch, const char *rel, const char *mime, struct json_object *fm)
{
	const char *rest, *slash;
	if (ch->dlen && (strncmp(rel, ch->dir, ch->dlen) != 0 || rel[ch->dlen] != '/'))
		return;
	rest = rel + (ch->dlen ? ch->dlen + 1 : 0);
	slash = strchr(rest, '/');
	ch->v = ph_xrealloc(ch->v, (ch->n + 1) * sizeof *ch->v);
	ch->v[ch->n].name = rest;
	ch->v[ch->n].nlen = slash ? (size_t)(slash - rest) : strlen(rest);
	ch->v[ch->n].dir = slash != NULL;
	ch->v[ch->n].mime = slash ? "inode/directory" : mime;
	ch->v[ch->n].fm = slash ? NULL : fm;
	ch->n++;
}

/* The direct children of l->rel in the skill serving l: its files and
 * those of the skills served below it, sorted by name, each once. */
static void
collect_children(struct rq *q, const struct loc *l, struct children *ch, char **hold)
{
	const struct ph_skill *s = &q->sc->skills[l->skill];
	size_t w = 0;
	ch->dir = l->rel;
	ch->dlen = strlen(l->rel);
	if (s->dynamic) {
		const struct dyn *d = q->dyn[l->skill];
		for (size_t i = 0; d && i < d->n; i++)
			add_child(ch, d->files[i].rel, ph_mime_guess(d->files[i].rel),
				  strcmp(d->files[i].rel, "SKILL.md") == 0 ? d->fm : NULL);
	} else {
		for (size_t i = 0; i < s->ntree; i++) {
			const struct ph_tree_ent *t = &s->tree[i];
			if (ent_served(q, l->skill, t, l->vals))
				add_child(ch, t->rel, t->f->mime, t->f->skill_md ? t->f->c.fm : NULL);
		}
		/* a dynamic skill served below: its folder, on the way to it */
		for (size_t i = 0; i < s->ndesc; i++) {
			const struct ph_skill *d = &q->sc->skills[s->desc[i]];
			struct ph_buf rel;
			if (!d->dynamic || !present(q, s->desc[i], l->vals))
				continue;
			ph_buf_init(&rel);
			for (size_t j = s->nsegs; j < d->nsegs; j++) {
				ph_buf_adds(&rel, d->segs[j]);
				ph_buf_addc(&rel, '/');
			}
			ph_buf_adds(&rel, "SKILL.md");
			hold[i] = ph_buf_steal(&rel);
			add_child(ch, hold[i], "text/markdown", NULL);
		}
	}
	if (ch->n > 1) /* qsort wants an array, never NULL */
		qsort(ch->v, ch->n, sizeof *ch->v, child_cmp);
	for (size_t i = 0; i < ch->n; i++) {
		if (w > 0 && ch->v[i].dir && ch->v[w - 1].dir && ch->v[w - 1].nlen == ch->v[i].nlen &&
		    memcmp(ch->v[w - 1].name, ch->v[i].name, ch->v[i].nlen) == 0)
			continue; /* more of the same subdirectory */
		ch->v[w++] = ch->v[i];
	}
	ch->n = w;
}

/* The -32602 of a URI that is no directory resource; one ending in '/'
 * also gets the canonical form (mcp-wire §14: no trailing slash). */
static void
not_a_directory(struct ph_outcome *o, const char *uri, size_t len)
{
	size_t n = len;
	while (n > 8 && uri[n - 1] == '/')
		n--;
	if (n < len && n > 8)
		ph_outcome_error(o, PH_E_PARAMS, NULL, "%s is not a directory resource: a directory's URI "
				 "has no trailing slash (%.*s)", uri, (int)n, uri);
	else
		ph_outcome_error(o, PH_E_PARAMS, NULL, "%s is not a directory resource", uri);
}

void
ph_skills_directory_read(struct ph_req *r, struct ph_outcome *o)
{
	struct rq q;
	struct loc l;
	size_t len, off, cnt;
	const char *uri = uri_param(r, &len);
	struct children ch = {NULL, 0, NULL, 0};
	char **hold = NULL;
	const struct ph_skill *s;
	if (uri == NULL) {
		uri_required(o);
		return;
	}
	r->target = uri;
	if (strncmp(uri, "skill://", 8) != 0 || r->srv->conf->skills == NULL) {
		ph_outcome_error(o, PH_E_PARAMS, NULL, "%s is not a directory resource", uri);
		return;
	}
	rq_init(&q, r);
	if (resolve(&q, uri, len, &l) != 0) {
		not_a_directory(o, uri, len);
		rq_free(&q);
		return;
	}
	s = &q.sc->skills[l.skill];
	hold = ph_xcalloc(s->ndesc + 1, sizeof *hold);
	collect_children(&q, &l, &ch, hold);
	if (ch.n == 0) {
		ph_outcome_error(o, PH_E_PARAMS, NULL, "%s is not a directory resource", uri);
		goto out;
	}
	if (ph_page_begin(r, ch.n, &off, o) != 0)
		goto out;
	cnt = ph_page_count(r, ch.n, off);
	{
		struct json_object *arr = json_object_new_array();
		struct hints h;
		for (size_t i = off; i < off + cnt; i++) {
			const struct child *c = &ch.v[i];
			struct json_object *e = json_object_new_object();
			char *rel = ch.dlen ? ph_xasprintf("%s/%.*s", l.rel, (int)c->nlen, c->name)
					    : ph_xstrndup(c->name, c->nlen);
			char *curi = file_uri(s, l.vals, rel);
			json_object_object_add(e, "uri", json_object_new_string(curi));
			if (c->fm != NULL) {
				/* a skill's own SKILL.md carries that skill's name and description */
				json_object_object_add(e, "name", json_object_get(json_object_object_get(c->fm, "name")));
				json_object_object_add(e, "description",
						       json_object_get(json_object_object_get(c->fm, "description")));
				json_object_object_add(e, "mimeType", json_object_new_string("text/markdown"));
			} else {
				json_object_object_add(e, "name", json_object_new_string_len(c->name, (int)c->nlen));
				json_object_object_add(e, "mimeType", json_object_new_string(c->mime));
			}
			json_object_array_add(arr, e);
			free(curi);
			free(rel);
		}
		o->result = json_object_new_object();
		json_object_object_add(o->result, "resources", arr);
		ph_page_end(r, o->result, off, cnt, ch.n);
		hints_init(&h);
		tree_hints(&q, l.skill, l.vals, &h);
		hints_put(&q, &h, o->result);
	}
out:
	for (size_t i = 0; hold && i < s->ndesc; i++)
		free(hold[i]);
	free(hold);
	free(ch.v);
	loc_free(&l);
	rq_free(&q);
}

void
ph_skills_capabilities(struct ph_req *r, struct json_object *caps)
{
	struct ph_skills_conf *sc = r->srv->conf->skills;
	struct json_object *v;
	struct rq q;
	bool any = false;
	if (sc == NULL || sc->n == 0)
		return;
	rq_init(&q, r);
	for (size_t i = 0; i < sc->n && !any; i++)
		any = visible(&q, i);
	rq_free(&q);
	if (!any)
		return;
	if (ph_jget(caps, "resources") == NULL)
		json_object_object_add(caps, "resources", json_object_new_object());
	v = json_object_new_object();
	json_object_object_add(v, "directoryRead", json_object_new_boolean(1));
	json_object_object_add(ph_caps_extensions(caps), EXT_ID, v);
}
