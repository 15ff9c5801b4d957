/* ph_skills.c: the methods of the skills extension: skills/list,
 * skills/get, resources/read of skill:// files, resources/directory/read,
 * and the capability. Everything was loaded by ph_skill_load.c; a request
 * is resolved against that index by ph_skill_req.c, and its files are read
 * below their skill directory and digested by ph_skill_read.c. */
#include "first.h"
#include "ph_call.h"
#include "ph_features.h"
#include "ph_fs.h"
#include "ph_skill_req.h"
#include "ph_skills.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXT_ID "io.modelcontextprotocol/skills"

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
	inv.kind = PHANTOM_KIND_SKILL_LIST;
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
		if (!ph_skill_visible(q, q->sc->listing[i].skill))
			continue;
		*vis = ph_xrealloc(*vis, (*n + 1) * sizeof **vis);
		(*vis)[(*n)++] = (struct line){q->sc->listing[i].skill, q->sc->listing[i].vals, false};
	}
	for (size_t k = 0; k < q->sc->n; k++) {
		if (q->sc->skills[k].list_h.kind == PH_HANDLER_NONE || !ph_skill_visible(q, k))
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
	ph_skill_rq_init(&f->q, r);
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
		if (!ph_skill_present(&f->q, l->skill, l->vals))
			continue; /* missing or bad: left out, as skills/list does */
		fm = ph_skill_served_fm(&f->q, l->skill);
		name = ph_jstr(fm, "name");
		desc = ph_jstr(fm, "description");
		uri = ph_skill_file_uri(k, l->vals, "SKILL.md");
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
	char *uri = ph_skill_file_uri(&f->q.sc->skills[l->skill], l->vals, "SKILL.md");
	ph_buf_adds(b, uri);
	free(uri);
}

void
ph_skills_files_free(struct ph_skill_files *f)
{
	if (f == NULL)
		return;
	lines_free(f->vis, f->n);
	ph_skill_rq_free(&f->q);
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
	ph_skill_rq_init(&q, r);
	if (lines_collect(&q, "skills/list", &vis, &nvis, &asked, o) != 0 ||
	    ph_page_begin(r, nvis, &off, o) != 0)
		goto out;
	cnt = ph_page_count(r, nvis, off);
	ph_skill_hints_init(&h);
	skills = json_object_new_array();
	for (size_t i = off; i < off + cnt; i++) {
		const struct line *l = &vis[i];
		enum ph_err e;
		struct json_object *ent = ph_skill_entry(&q, l->skill, l->vals, &h, &e);
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
	ph_skill_hints_put(&q, &h, o->result);
out:
	lines_free(vis, nvis);
	ph_skill_rq_free(&q);
}

void
ph_skills_get(struct ph_req *r, struct ph_outcome *o)
{
	struct rq q;
	struct loc l;
	struct hints h;
	size_t len;
	const char *uri = ph_skill_uri_param(r, &len);
	enum ph_err e = PH_E_PARAMS;
	struct json_object *ent = NULL;
	if (uri == NULL) {
		ph_skill_uri_required(o);
		return;
	}
	r->target = uri;
	ph_skill_rq_init(&q, r);
	ph_skill_hints_init(&h);
	if (ph_skill_resolve(&q, uri, len, &l) == 0) {
		if (strcmp(l.rel, "SKILL.md") == 0)
			ent = ph_skill_entry(&q, l.skill, l.vals, &h, &e);
		ph_skill_loc_free(&l);
	}
	if (ent == NULL && l.failed)
		e = PH_E_HANDLER;
	if (ent != NULL) {
		o->result = json_object_new_object();
		json_object_object_add(o->result, "skill", ent);
		ph_skill_hints_put(&q, &h, o->result);
	} else if (e == PH_E_HANDLER) {
		ph_outcome_error(o, PH_E_HANDLER, NULL, "Internal error");
	} else {
		ph_outcome_error(o, PH_E_PARAMS, NULL, "No skill is served at %s", uri);
	}
	ph_skill_rq_free(&q);
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
	ph_skill_rq_init(&q, r);
	/* the deepest route, as ph_skill_resolve() takes it, without running a
	 * dynamic skill's handler: the call itself does that */
	if ((m = ph_skills_match(q.sc, segs, (size_t)n, &used)) >= 0 && !ph_skill_visible(&q, (size_t)m))
		m = -1;
	ph_skill_segs_free(segs, (size_t)n);
	ph_skill_rq_free(&q);
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
	const char *u = ph_skill_uri_param(r, &len);
	const struct ph_skill *s;
	struct hints h;
	if (u == NULL || strlen(uri) != len || r->srv->conf->skills == NULL) {
		ph_outcome_not_found(r, o, uri);
		return;
	}
	ph_skill_rq_init(&q, r);
	if (ph_skill_resolve(&q, u, len, &l) != 0) {
		ph_outcome_not_found(r, o, uri);
		ph_skill_rq_free(&q);
		return;
	}
	s = &q.sc->skills[l.skill];
	ph_skill_hints_init(&h);
	if (s->dynamic) {
		const struct dfile *f = l.rel[0] ? ph_skill_dyn_find(&q, l.skill, l.rel) : NULL;
		if (f == NULL) {
			ph_outcome_not_found(r, o, uri);
		} else {
			o->result = json_object_new_object();
			json_object_object_add(o->result, "contents",
					       contents(uri, ph_mime_guess(f->rel), f->data, f->len));
			ph_skill_hints_add(&h, s);
			ph_skill_hints_put(&q, &h, o->result);
		}
	} else {
		const struct ph_tree_ent *t = l.rel[0] ? ph_skills_tree_find(s, l.rel) : NULL;
		struct ph_buf b;
		ph_buf_init(&b);
		if (t == NULL || !ph_skill_ent_served(&q, l.skill, t, l.vals) ||
		    ph_skills_file_bytes(q.sc, &q.sc->skills[t->owner], t->f, l.vals, r->who.principal, r->who.assigns,
					 &b) != 0) {
			if (t != NULL && errno != ENOENT)
				ph_log("warning", "skill file %s is not served: %s", t->f->disk, ph_fs_strerror(errno));
			ph_outcome_not_found(r, o, uri);
		} else {
			o->result = json_object_new_object();
			json_object_object_add(o->result, "contents",
					       contents(uri, t->f->mime, b.data ? b.data : "", b.len));
			ph_skill_hints_add(&h, &q.sc->skills[t->owner]);
			if (t->f->uses_principal)
				h.pub = false;
			ph_skill_hints_put(&q, &h, o->result);
		}
		ph_buf_free(&b);
	}
	ph_skill_loc_free(&l);
	ph_skill_rq_free(&q);
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
	ph_skill_rq_init(&q, r);
	if (ph_skill_resolve(&q, uri, strlen(uri), &l) == 0) {
		const struct ph_skill *s = &q.sc->skills[l.skill];
		const struct ph_tree_ent *t = NULL;
		if (s->dynamic)
			w = PH_SUB_OTHER; /* its handler makes the files */
		else if (l.rel[0] && (t = ph_skills_tree_find(s, l.rel)) != NULL &&
			 ph_skill_ent_served(&q, l.skill, t, l.vals)) {
			*path = ph_xstrdup(t->f->disk);
			w = PH_SUB_FILE;
		}
		ph_skill_loc_free(&l);
	}
	ph_skill_rq_free(&q);
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
			if (ph_skill_ent_served(q, l->skill, t, l->vals))
				add_child(ch, t->rel, t->f->mime, t->f->skill_md ? t->f->c.fm : NULL);
		}
		/* a dynamic skill served below: its folder, on the way to it */
		for (size_t i = 0; i < s->ndesc; i++) {
			const struct ph_skill *d = &q->sc->skills[s->desc[i]];
			struct ph_buf rel;
			if (!d->dynamic || !ph_skill_present(q, s->desc[i], l->vals))
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
	const char *uri = ph_skill_uri_param(r, &len);
	struct children ch = {NULL, 0, NULL, 0};
	char **hold = NULL;
	const struct ph_skill *s;
	if (uri == NULL) {
		ph_skill_uri_required(o);
		return;
	}
	r->target = uri;
	if (strncmp(uri, "skill://", 8) != 0 || r->srv->conf->skills == NULL) {
		ph_outcome_error(o, PH_E_PARAMS, NULL, "%s is not a directory resource", uri);
		return;
	}
	ph_skill_rq_init(&q, r);
	if (ph_skill_resolve(&q, uri, len, &l) != 0) {
		not_a_directory(o, uri, len);
		ph_skill_rq_free(&q);
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
			char *curi = ph_skill_file_uri(s, l.vals, rel);
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
		ph_skill_hints_init(&h);
		ph_skill_tree_hints(&q, l.skill, l.vals, &h);
		ph_skill_hints_put(&q, &h, o->result);
	}
out:
	for (size_t i = 0; hold && i < s->ndesc; i++)
		free(hold[i]);
	free(hold);
	free(ch.v);
	ph_skill_loc_free(&l);
	ph_skill_rq_free(&q);
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
	ph_skill_rq_init(&q, r);
	for (size_t i = 0; i < sc->n && !any; i++)
		any = ph_skill_visible(&q, i);
	ph_skill_rq_free(&q);
	if (!any)
		return;
	if (ph_jget(caps, "resources") == NULL)
		json_object_object_add(caps, "resources", json_object_new_object());
	v = json_object_new_object();
	json_object_object_add(v, "directoryRead", json_object_new_boolean(1));
	json_object_object_add(ph_caps_extensions(caps), EXT_ID, v);
}
