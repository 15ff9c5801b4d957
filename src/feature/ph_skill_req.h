/* ph_skill_req.h: what the skills files share at request time. Private to
 * feature/: the rest of the server uses ph_skills.h and ph_features.h. */
#ifndef PH_SKILL_REQ_H
#define PH_SKILL_REQ_H
#include "first.h"
#include "ph_server.h"
#include "ph_skills.h"

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

/* What one request knows of the skills, found out as it is needed. */
struct rq {
	struct ph_req *r;
	struct ph_skills_conf *sc;
	unsigned char *vis;     /* per skill: visible to the principal */
	unsigned char *present; /* per static skill: visible and its SKILL.md is good */
	struct dyn **dyn;       /* per dynamic skill: its handler's answer */
};

/* A URI resolved to the skill that serves it. */
struct loc {
	bool failed;    /* the route's own skill is dynamic and its handler failed */
	char **segs;
	size_t nsegs;
	size_t skill;   /* the deepest served skill on the route's chain */
	char **vals;    /* its parameter values (point into segs) */
	char *rel;      /* the rest of the path, "" for the skill root */
};

/* Caching hints combined over a set of skills (phantom-behaviour §1.9). */
struct hints {
	size_t n;
	long long ttl;
	bool pub;
};

/* ---- one request (ph_skill_req.c) ---- */

/* Starts and ends what one request knows of the skills (q borrows r). */
void ph_skill_rq_init(struct rq *q, struct ph_req *r);
void ph_skill_rq_free(struct rq *q);
/* Whether the principal may see skill k (it or a skill it is nested in is
 * allowed). */
bool ph_skill_visible(struct rq *q, size_t k);
/* Whether skill k is served to this request with parameter values vals. */
bool ph_skill_present(struct rq *q, size_t k, char *const *vals);
/* The frontmatter of present skill k (borrowed), or NULL. */
struct json_object *ph_skill_served_fm(struct rq *q, size_t k);
/* A file of present dynamic skill k, or NULL. */
const struct dfile *ph_skill_dyn_find(struct rq *q, size_t k, const char *rel);
/* The skill:// URI of file rel of k with vals (caller frees). */
char *ph_skill_file_uri(const struct ph_skill *k, char *const *vals, const char *rel);
/* Resolves a canonical skill:// URI into l (free with ph_skill_loc_free).
 * Returns 0, or -1 when no served skill covers it. */
int ph_skill_resolve(struct rq *q, const char *uri, size_t len, struct loc *l);
void ph_skill_loc_free(struct loc *l);
/* Caching hints: start, add a skill, put ttlMs and cacheScope in res. */
void ph_skill_hints_init(struct hints *h);
void ph_skill_hints_add(struct hints *h, const struct ph_skill *k);
void ph_skill_hints_put(struct rq *q, const struct hints *h, struct json_object *res);
/* Adds the hints of skill k's tree as served to this request. */
void ph_skill_tree_hints(struct rq *q, size_t k, char *const *vals, struct hints *h);
/* Whether tree entry e is served by skill serving with vals. */
bool ph_skill_ent_served(struct rq *q, size_t serving, const struct ph_tree_ent *e,
			 char *const *vals);
/* The skill entry of skill k with vals (caller puts) added to h, or NULL
 * with *e set: PH_E_PARAMS when not served, PH_E_HANDLER when it cannot be. */
struct json_object *ph_skill_entry(struct rq *q, size_t k, char *const *vals, struct hints *h,
				   enum ph_err *e);
/* The uri parameter as a string without NUL, or NULL. */
const char *ph_skill_uri_param(struct ph_req *r, size_t *len);
/* The -32602 of a request without uri. */
void ph_skill_uri_required(struct ph_outcome *o);
#endif
