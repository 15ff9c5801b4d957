/* ph_skills.h: the skills extension (io.modelcontextprotocol/skills).
 *
 * A manifest (YAML) maps skill paths to directories. Everything is loaded
 * at start or reload (ph_skill_load.c): the manifest, every skill's file
 * list, SKILL.md frontmatter, templates and the limits. Requests only look
 * things up, stat files, read them and hash them; the digest of a static
 * file is computed once per worker and reused until the file changes.
 *
 * Files: ph_skill_uri.c (skill:// URIs), ph_skill_fm.c (SKILL.md
 * frontmatter), ph_skill_tmpl.c (templates), ph_skill_load.c (the manifest),
 * ph_skill_scan.c (the skill directories at load), ph_skill_req.c (a
 * request against the index), ph_skill_read.c (reading and digesting
 * files), ph_skills.c (the methods). */
#ifndef PH_SKILLS_H
#define PH_SKILLS_H
#include "first.h"
#include "ph_config.h"
#include "ph_mime.h"
#include "ph_registry.h"
#include "ph_util.h"
#include <json-c/json.h>
#include <regex.h>
#include <sys/types.h>
#include <time.h>

/* Defaults of the per-skill limits (mcp-wire §14.3). */
#define PH_SKILL_MAX_FILES 512
#define PH_SKILL_MAX_BYTES 16777216LL
#define PH_SKILL_MAX_DEPTH 16
/* Segments in a skill:// URI; deeper URIs are not served. */
#define PH_SKILL_MAX_SEGS 64

/* What a request remembers about one file between requests (per worker):
 * valid while the file keeps its identity (device, inode, size, mtime,
 * ctime). */
struct ph_fcache {
	bool valid;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtim, ctim;
	unsigned char digest[32];  /* static files: sha256 of the bytes */
	char *src;                 /* templates: the source */
	size_t srclen;
	struct json_object *fm;    /* SKILL.md: its frontmatter */
};

/* One file a skill owns (not those of its nested skills). */
struct ph_skill_file {
	char *rel;      /* served path below the skill root, '/'-separated, no .tmpl */
	char *disk;     /* absolute path on disk */
	char *disk_rel; /* path below the skill's real directory */
	bool tmpl;      /* a .tmpl file, rendered per request */
	bool skill_md;  /* the owner's SKILL.md */
	bool uses_principal; /* template that names {{principal}} or {{user}} */
	const char *mime;
	struct ph_fcache c;
};

/* One file of a skill's tree: its own files and those of every skill nested
 * below it, at their place in the URI namespace. */
struct ph_tree_ent {
	char *rel;    /* below the root of the tree's skill */
	size_t owner; /* index of the owning skill */
	struct ph_skill_file *f; /* borrowed from the owner */
};

struct ph_skill_param {
	char *name;
	char *pattern;
	size_t seg;     /* position in the path */
	regex_t re;
	bool re_ok;
};

struct ph_skill {
	char *path;          /* as in the manifest: acme/billing/refunds, studies/:id/x */
	char **segs;         /* its segments; a parameter keeps its ':' */
	size_t nsegs;
	struct ph_skill_param *params;
	size_t nparams;
	char *dir;           /* real path of the directory ("" for dynamic) */
	int line;            /* manifest line, for messages */
	bool has_cache, pub;
	long long ttl_ms;
	bool dynamic;
	struct ph_handler h; /* dynamic: the exec handler that produces the files */
	struct json_object *fm; /* frontmatter read at load */
	struct ph_skill_file *files; /* own files, sorted by rel */
	size_t nfiles;
	struct ph_tree_ent *tree;    /* own and nested files, sorted by rel */
	size_t ntree;
	size_t *anc;         /* skills this one is nested in, deepest first */
	size_t nanc;
	size_t *desc;        /* skills nested in this one (any depth) */
	size_t ndesc;
	char ***list;        /* concrete parameter values listed by skills/list */
	size_t nlist;
	struct ph_handler list_h; /* list: as a handler: the values per request (kind NONE: none) */
	struct ph_auth_scopes auth_scopes; /* its own (auth_scopes in the manifest) */
	struct ph_auth_scopes need;        /* its own and those of the skills it is nested in */
};

/* One line of the default skills/list: a skill and its parameter values. */
struct ph_listing {
	size_t skill;
	char **vals; /* borrowed from the skill's list, NULL without parameters */
	char *key;   /* concrete path, the sort key */
};

/* The `skills:` section of phantom.yaml and everything the manifest says. */
struct ph_skills_conf {
	char *manifest;       /* the manifest's path, resolved */
	long long max_files, max_bytes, max_depth;
	bool digest_cache;
	int yaml_depth;
	struct ph_skill *skills; /* sorted by path */
	size_t n;
	size_t *match_order;  /* deepest first, literal before parameter */
	struct ph_listing *listing;
	size_t nlisting;
};

/* ---- skill:// URIs (ph_skill_uri.c) ---- */

/* Splits a skill:// URI written in canonical form into its decoded
 * segments. Canonical: scheme "skill://", no empty segment, no query or
 * fragment, every byte outside A-Z a-z 0-9 - . _ ~ percent-encoded with
 * uppercase hex and nothing else encoded. Segments that decode to "",
 * ".", ".." or hold '/' or NUL are refused. Returns the number of segments
 * (*segs: caller frees with ph_skill_segs_free), or -1. len is the length of
 * uri (it may hold a NUL, which is refused). */
int ph_skill_uri_split(const char *uri, size_t len, char ***segs) PH_WUR;
void ph_skill_segs_free(char **segs, size_t n);
/* Appends seg (len bytes) percent-encoded in the canonical form. */
void ph_skill_uri_encode(struct ph_buf *b, const char *seg, size_t len);
/* Appends a '/'-separated relative path, each segment encoded. */
void ph_skill_uri_encode_path(struct ph_buf *b, const char *rel);

/* ---- SKILL.md frontmatter (ph_skill_fm.c) ---- */

/* Splits SKILL.md into frontmatter YAML and body the way clients do: an
 * optional byte order mark, a first line "---", then YAML up to a line
 * "---" (trailing blanks allowed); CRLF is accepted. Converts the YAML to
 * JSON with YAML 1.2 core-schema typing (what the SDK's verifier reads).
 * Returns the frontmatter (caller puts), or NULL with *err ("LINE: message",
 * caller frees; LINE counts from the file's first line). */
struct json_object *ph_skill_frontmatter(const char *text, size_t len, int max_depth, char **err);
/* Checks the Agent Skills rules on a frontmatter: name (1-64 of a-z 0-9 and
 * single hyphens), description (1-1024 characters), compatibility
 * (1-500), metadata (strings only, no reserved key), allowed-tools.
 * Returns NULL or a static message. */
const char *ph_skill_fm_check(struct json_object *fm);
/* True for a valid Agent Skills name. */
bool ph_skill_name_valid(const char *name);

/* ---- templates (ph_skill_tmpl.c) ---- */

/* Checks a template's placeholders: {{name}} with optional blanks, where
 * name is one of pnames, "principal", "user" or "assigns.NAME" (NAME of
 * letters, digits, '_' and '-'); *principal is set for the last three. Returns NULL, or a message
 * (caller frees) and *line the 1-based line of the problem. Sets
 * *principal when the principal is used. */
char *ph_skill_tmpl_check(const char *src, size_t len, char *const *pnames, size_t np,
			  int *line, bool *principal);
/* Renders a template into out: parameters from vals (parallel to pnames),
 * the principal (NULL: empty), {{assigns.NAME}} from assigns (NULL or a
 * missing, object or array member: empty). Unknown placeholders stay as
 * they are. */
void ph_skill_tmpl_render(struct ph_buf *out, const char *src, size_t len, char *const *pnames,
			  char *const *vals, size_t np, const char *principal, struct json_object *assigns);

/* ---- configuration (ph_skill_load.c): the parser of the skills section is
 * declared in ph_sections.h ---- */

/* ---- lookups and reads without a request (ph_skill_req.c, ph_skill_read.c),
 * for tests and fuzzing ---- */

/* Finds the deepest skill route matching a prefix of segs (literal segments
 * before parameters). Returns the skill index or -1; *used gets the number
 * of segments the route takes. */
long ph_skills_match(const struct ph_skills_conf *sc, char *const *segs, size_t n, size_t *used);
/* The tree entry at rel in skill k, or NULL. */
const struct ph_tree_ent *ph_skills_tree_find(const struct ph_skill *k, const char *rel);
/* The bytes a file serves: read (and rendered for templates) with vals,
 * principal and assigns (may be NULL). Returns 0 with *out (caller frees), -1 with errno. */
int ph_skills_file_bytes(const struct ph_skills_conf *sc, const struct ph_skill *owner,
			 struct ph_skill_file *f, char *const *vals, const char *principal,
			 struct json_object *assigns, struct ph_buf *out) PH_WUR;
/* The size and sha256 of what a file serves; static files come from the
 * digest cache when the file has not changed. Returns 0 or -1. */
int ph_skills_file_digest(const struct ph_skills_conf *sc, const struct ph_skill *owner,
			  struct ph_skill_file *f, char *const *vals, const char *principal,
			  struct json_object *assigns, unsigned char digest[32], size_t *size) PH_WUR;
/* Brings f's cache up to date with the file on disk (ph_skill_read.c).
 * Returns 0, or -1 with errno (EINVAL: SKILL.md no longer has valid
 * frontmatter). */
int ph_skill_refresh(const struct ph_skills_conf *sc, const struct ph_skill *owner,
		     struct ph_skill_file *f) PH_WUR;
/* How many files were hashed in this process (to show the cache works). */
extern unsigned long ph_skills_hash_count;
#endif
