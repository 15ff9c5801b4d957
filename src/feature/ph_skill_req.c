/* ph_skill_req.c: one request against the skills index loaded by
 * ph_skill_load.c: which skills the principal sees and which are present,
 * dynamic skills run once per request, skill:// URIs resolved to the skill
 * that serves them, caching hints, and the entry of one skill.
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
#include "ph_fs.h"
#include "ph_log.h"
#include "ph_skill_req.h"
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

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

/* bsearch's comparison of a path with an element whose first member is its
 * path (struct ph_tree_ent, struct dfile: both sorted by it). */
static int
rel_find(const void *key, const void *elem)
{
	return strcmp(key, *(char *const *)elem);
}
_Static_assert(offsetof(struct ph_tree_ent, rel) == 0, "rel_find reads the path first");
_Static_assert(offsetof(struct dfile, rel) == 0, "rel_find reads the path first");

const struct ph_tree_ent *
ph_skills_tree_find(const struct ph_skill *k, const char *rel)
{
	return k->ntree ? bsearch(rel, k->tree, k->ntree, sizeof *k->tree, rel_find) : NULL;
}

/* ---- one request ------------------------------------------------------------------ */

enum { UNKNOWN = 0, YES, NO };

void
ph_skill_rq_init(struct rq *q, struct ph_req *r)
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

void
ph_skill_rq_free(struct rq *q)
{
	for (size_t i = 0; i < q->sc->n; i++)
		dyn_free(q->dyn[i]);
	free(q->dyn);
	free(q->vis);
	free(q->present);
}

bool
ph_skill_visible(struct rq *q, size_t k)
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
	inv.kind = PHANTOM_KIND_SKILL;
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
bool
ph_skill_present(struct rq *q, size_t k, char *const *vals)
{
	struct ph_skill *s = &q->sc->skills[k];
	if (s->dynamic)
		return ph_skill_visible(q, k) && dyn_run(q, k, vals)->ok;
	if (q->present[k] == UNKNOWN) {
		struct ph_skill_file *md = skill_md(s);
		bool ok = ph_skill_visible(q, k) && md != NULL;
		if (ok && ph_skill_refresh(q->sc, s, md) != 0) {
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
struct json_object *
ph_skill_served_fm(struct rq *q, size_t k)
{
	struct ph_skill *s = &q->sc->skills[k];
	struct ph_skill_file *md;
	if (s->dynamic)
		return q->dyn[k] ? q->dyn[k]->fm : NULL;
	md = skill_md(s);
	return md ? md->c.fm : NULL;
}

/* A file of dynamic skill k (present), or NULL. */
const struct dfile *
ph_skill_dyn_find(struct rq *q, size_t k, const char *rel)
{
	const struct dyn *d = q->dyn[k];
	return d && d->n ? bsearch(rel, d->files, d->n, sizeof *d->files, rel_find) : NULL;
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

char *
ph_skill_file_uri(const struct ph_skill *k, char *const *vals, const char *rel)
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

void
ph_skill_loc_free(struct loc *l)
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
int
ph_skill_resolve(struct rq *q, const char *uri, size_t len, struct loc *l)
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
	if (ph_skill_present(q, (size_t)m, l->vals)) {
		l->skill = (size_t)m;
	} else {
		l->failed = dyn_failed(q, (size_t)m);
		size_t i;
		for (i = 0; i < k->nanc && !ph_skill_present(q, k->anc[i], l->vals); i++)
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
	ph_skill_loc_free(l);
	return -1;
}

void
ph_skill_hints_init(struct hints *h)
{
	h->n = 0;
	h->ttl = LLONG_MAX;
	h->pub = true;
}

void
ph_skill_hints_add(struct hints *h, const struct ph_skill *k)
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

void
ph_skill_hints_put(struct rq *q, const struct hints *h, struct json_object *res)
{
	bool pub = h->n > 0 && h->pub && !ph_access_restricted(q->r);
	json_object_object_add(res, "ttlMs", json_object_new_int64(h->n > 0 ? h->ttl : 0));
	json_object_object_add(res, "cacheScope", json_object_new_string(pub ? "public" : "private"));
}

/* Adds the hints of skill k's tree as served to this request: k and every
 * present nested skill; a template that names the principal makes it
 * private. */
void
ph_skill_tree_hints(struct rq *q, size_t k, char *const *vals, struct hints *h)
{
	const struct ph_skill *s = &q->sc->skills[k];
	ph_skill_hints_add(h, s);
	for (size_t i = 0; i < s->nfiles; i++)
		if (s->files[i].uses_principal)
			h->pub = false;
	for (size_t i = 0; i < s->ndesc; i++) {
		const struct ph_skill *d = &q->sc->skills[s->desc[i]];
		if (!ph_skill_present(q, s->desc[i], vals))
			continue;
		ph_skill_hints_add(h, d);
		for (size_t j = 0; j < d->nfiles; j++)
			if (d->files[j].uses_principal)
				h->pub = false;
	}
}

bool
ph_skill_ent_served(struct rq *q, size_t serving, const struct ph_tree_ent *e, char *const *vals)
{
	return e->owner == serving || ph_skill_present(q, e->owner, vals);
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
		if (q->sc->skills[s->desc[i]].dynamic && ph_skill_present(q, s->desc[i], vals))
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
struct json_object *
ph_skill_entry(struct rq *q, size_t k, char *const *vals, struct hints *h, enum ph_err *e)
{
	struct ph_skill *s = &q->sc->skills[k];
	struct json_object *o, *res, *fm;
	char *uri;
	long long total = 0;
	size_t count = 0;
	if (!ph_skill_present(q, k, vals)) {
		/* a dynamic handler that failed is an error; no skill is "not served" */
		*e = dyn_failed(q, k) ? PH_E_HANDLER : PH_E_PARAMS;
		return NULL;
	}
	for (size_t i = 0; i < s->ndesc; i++) {
		/* so is one nested in it (phantom-behaviour §1.4) */
		if (q->sc->skills[s->desc[i]].dynamic && !ph_skill_present(q, s->desc[i], vals) &&
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
			if (!ph_skill_ent_served(q, k, t, vals))
				continue;
			if (ph_skills_file_digest(q->sc, owner, t->f, vals, q->r->who.principal, q->r->who.assigns, d,
						  &size) != 0) {
				ph_log("warning", "skill '%s': %s is not served: %s", s->path, t->f->disk,
				       ph_fs_strerror(errno));
				continue;
			}
			count++;
			total += (long long)size;
			hex_digest(hex, d);
			ent = json_object_new_object();
			uri = ph_skill_file_uri(s, vals, t->rel);
			json_object_object_add(ent, "uri", json_object_new_string(uri));
			free(uri);
			json_object_object_add(ent, "digest", json_object_new_string(hex));
			json_object_object_add(ent, "size", json_object_new_int64((int64_t)size));
			json_object_array_add(res, ent);
		}
	}
	fm = ph_skill_served_fm(q, k);
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
	uri = ph_skill_file_uri(s, vals, "SKILL.md");
	json_object_object_add(o, "uri", json_object_new_string(uri));
	free(uri);
	json_object_object_add(o, "frontmatter", json_object_get(fm));
	json_object_object_add(o, "resources", res);
	ph_skill_tree_hints(q, k, vals, h);
	return o;
}

/* The uri parameter as a string without NUL, or NULL. */
const char *
ph_skill_uri_param(struct ph_req *r, size_t *len)
{
	struct json_object *u = ph_jget(r->params, "uri");
	const char *s;
	if (u == NULL || !json_object_is_type(u, json_type_string))
		return NULL;
	s = json_object_get_string(u);
	*len = (size_t)json_object_get_string_len(u);
	return s;
}

void
ph_skill_uri_required(struct ph_outcome *o)
{
	struct json_object *d = json_object_new_object();
	json_object_object_add(d, "uri", json_object_new_string("is required"));
	ph_outcome_error(o, PH_E_PARAMS, d, "Invalid params: uri is required");
}
