/* ph_features.h: the entry points the MCP core calls in feature modules.
 * Each feature owns its file (ph_tools.c, ph_prompts.c, ph_resources.c,
 * ph_skills.c, ...) and adds its declarations here. */
#ifndef PH_FEATURES_H
#define PH_FEATURES_H
#include "first.h"
#include "phantom.h"
#include "ph_server.h"


/* resources/read of a uri that is not skill:// (ph_resources.c). */
void ph_resources_read(struct ph_req *r, const char *uri, struct ph_outcome *o);
/* Adds "resources" to caps when resources or templates are visible. */
void ph_resources_capabilities(struct ph_req *r, struct json_object *caps);

/* Tools, prompts, resources and completion from the registry
 * (ph_tools.c, ph_prompts.c, ph_resources.c, ph_complete.c). The *_available
 * functions say whether the methods exist at all (else -32601); the
 * *_capabilities functions add the capability when an item is visible. */
bool ph_tools_available(const struct ph_server *s);
void ph_tools_capabilities(struct ph_req *r, struct json_object *caps);
void ph_tools_list(struct ph_req *r, struct ph_outcome *o);
void ph_tools_call(struct ph_req *r, struct ph_outcome *o);
bool ph_prompts_available(const struct ph_server *s);
void ph_prompts_capabilities(struct ph_req *r, struct json_object *caps);
void ph_prompts_list(struct ph_req *r, struct ph_outcome *o);
void ph_prompts_get(struct ph_req *r, struct ph_outcome *o);
bool ph_resources_configured(const struct ph_server *s);
bool ph_templates_available(const struct ph_server *s);
void ph_resources_list(struct ph_req *r, struct ph_outcome *o);
void ph_templates_list(struct ph_req *r, struct ph_outcome *o);
/* Reads a configured resource for embedding (prompts). Returns 0 with the
 * contents array (caller puts), 1 when nothing serves uri, -1 on failure. */
int ph_resources_fetch(struct ph_req *r, const char *uri, struct json_object **contents);
bool ph_complete_available(const struct ph_server *s);
void ph_complete_capabilities(struct ph_req *r, struct json_object *caps);
void ph_complete(struct ph_req *r, struct ph_outcome *o);
/* ttlMs/cacheScope of a list method: the section's hints, else the
 * server's (enum ph_list of ph_registry.h). */
void ph_list_cache_hints(struct ph_req *r, int which, struct json_object *result);
/* A handler's own cache hints (the ttlMs and cacheScope members of its
 * answer res, borrowed) capped by the configured ttl and scope, put on
 * result: ttlMs the smaller, cacheScope "public" only when the
 * configuration says so, no allow-list shapes r's view and the handler
 * does not say "private". Nothing when the handler gave none, under
 * 2025-11-25 or on a retry; a hint out of range is logged under label and
 * ignored. */
void ph_cache_cap(struct ph_req *r, struct json_object *res, long long ttl, const char *scope,
		  struct json_object *result, const char *label);

/* How one configured list is answered: the result key, the access kind,
 * which list's cache hints apply, the name access control checks, and the
 * entry of one item (a new object). */
struct ph_list_spec {
	const char *key;
	enum ph_kind kind;
	int which;
	const char *(*name_of)(const void *item);
	struct json_object *(*to_json)(const void *item);
};
/* Answers a list method with one page of the items (borrowed, n of them)
 * the principal may see, in configuration order, with nextCursor and cache
 * hints. */
void ph_list_page(struct ph_req *r, struct ph_outcome *o, const struct ph_list_spec *spec,
		  void *const *items, size_t n);

/* resources/read of a skill:// uri (ph_skills.c). */
void ph_skills_read(struct ph_req *r, const char *uri, struct ph_outcome *o);
/* Adds "resources" and extensions["io.modelcontextprotocol/skills"] to caps
 * when a skill is visible. */
void ph_skills_capabilities(struct ph_req *r, struct json_object *caps);
/* skills/list, skills/get and resources/directory/read (ph_skills.c),
 * available when a skills manifest is configured. */
void ph_skills_list(struct ph_req *r, struct ph_outcome *o);
void ph_skills_get(struct ph_req *r, struct ph_outcome *o);
void ph_skills_directory_read(struct ph_req *r, struct ph_outcome *o);
bool ph_skills_configured(const struct ph_server *s);
/* The OAuth scopes reading uri (a skill:// URI: skills/get, resources/read
 * and the like) needs: those of the deepest skill there and of the skills
 * it is nested in; NULL when no skill the principal may see is there (so
 * what is hidden stays unknown). */
struct ph_auth_scopes;
const struct ph_auth_scopes *ph_skills_scopes(struct ph_req *r, const char *uri);
/* The longest cursor a resource list handler may return. */
#define PH_CATALOG_CURSOR_MAX 4096
/* Checks one entry a resource list handler returned: uri (scheme:rest, no
 * space or control character, not skill://) and name required, title,
 * description, mimeType (type/subtype), size (integer >= 0), annotations
 * (object) and icons (array) optional. Returns a new Resource object with
 * only those members (caller puts), or NULL with the reason in why. */
struct json_object *ph_catalog_entry(struct json_object *e, char *why, size_t wsz);
/* resources/list: the SKILL.md of every skill skills/list lists to this
 * request (the configured listing, then each list handler's parameter sets
 * for this principal; allow-lists apply), as resources named and described
 * by their frontmatter (mimeType text/markdown). */
struct ph_skill_files;
/* Collects them: *f (free with ph_skills_files_free; NULL when no skills
 * are served), *n of them, *per_principal true when a list handler gave
 * part of them. Returns 0, or -1 with o set (-32603) when a list handler
 * failed. */
int ph_skills_files(struct ph_req *r, struct ph_skill_files **f, size_t *n, bool *per_principal,
		    struct ph_outcome *o);
/* Appends those at positions off to off+max-1 that are served (a skill
 * whose SKILL.md is missing or bad is left out) to arr. f may be NULL. */
void ph_skills_files_page(struct ph_skill_files *f, size_t off, size_t max, struct json_object *arr);
/* Appends the URI of the one at position i (below *n; f not NULL) to b:
 * its key in a paging cursor. */
void ph_skills_files_key(const struct ph_skill_files *f, size_t i, struct ph_buf *b);
void ph_skills_files_free(struct ph_skill_files *f);

/* MCP Apps (ph_apps.c). True when this request gets the apps' _meta.ui
 * (server.app_meta all, or a client declaring the extension). */
bool ph_apps_meta_shown(const struct ph_req *r);
/* capabilities.extensions["io.modelcontextprotocol/ui"], with tools and
 * resources, when an app's resource is visible (both eras). */
void ph_apps_capabilities(struct ph_req *r, struct json_object *caps);

/* The capabilities this request may see (ph_capabilities.c); caller puts. */
/* caps.extensions, added when absent (borrowed). Here, not in
 * ph_capabilities.c: the features that call it are called from there. */
static inline struct json_object *
ph_caps_extensions(struct json_object *caps)
{
	struct json_object *ext = ph_jget(caps, "extensions");
	if (ext == NULL) {
		ext = json_object_new_object();
		json_object_object_add(caps, "extensions", ext);
	}
	return ext;
}
struct json_object *ph_capabilities(struct ph_req *r);

/* Tools as tasks (ph_tasks.c; the hub runs their processes). */
struct ph_tool;
bool ph_tasks_available(const struct ph_server *s);
/* capabilities.extensions["io.modelcontextprotocol/tasks"] when a tool
 * runs as a task (2026-07-28 only). */
void ph_tasks_capabilities(struct ph_req *r, struct json_object *caps);
/* A tool with task: required called without the extension: true after
 * setting -32021 in o. */
bool ph_tasks_refuse(struct ph_req *r, const struct ph_tool *t, struct ph_outcome *o);
/* Makes the call a task when the tool and the request allow it: true after
 * setting o (the task, an inline answer, or an error), false when the call
 * is to run as any other. args are the validated arguments. */
bool ph_tasks_call(struct ph_req *r, const struct ph_tool *t, struct json_object *args, const char *label,
		   struct ph_outcome *o);
/* subscriptions/listen with taskIds from a request without the extension:
 * true after setting -32021 in o. */
bool ph_tasks_refuse_listen(struct ph_req *r, struct ph_outcome *o);
/* The ids of ids (an array, NULL: none) that name tasks of this request's
 * principal; unknown and other principals' ids are left out. Caller puts. */
struct json_object *ph_tasks_grant(struct ph_req *r, struct json_object *ids);
void ph_tasks_get(struct ph_req *r, struct ph_outcome *o);
void ph_tasks_update(struct ph_req *r, struct ph_outcome *o);
void ph_tasks_cancel(struct ph_req *r, struct ph_outcome *o);
/* A tool handler's answer as a CallToolResult (ph_tools.c); problems with
 * it are logged under label and give the generic failure. Caller puts. */
struct json_object *ph_tool_result(const struct ph_tool *t, struct json_object *res, const char *label);
/* What serves a URI of a listen's resourceSubscriptions, as this request's
 * principal may read it: nothing (or nothing it may read), a file (*path
 * set, caller frees: the hub watches it), or something else (a handler,
 * inline text: the application announces its changes with phantom-fcgi
 * --notify or a handler's resourcesUpdated). ph_resources.c; skill:// URIs
 * in ph_skills.c. */
/* The streams open at once on a host (listen streams and legacy GET
 * streams): subscriptions.max_streams, or its default when it is 0. */
long long ph_subscriptions_max(const struct ph_config *c);
enum ph_sub_kind { PH_SUB_NONE, PH_SUB_FILE, PH_SUB_OTHER };
enum ph_sub_kind ph_resources_watch(struct ph_req *r, const char *uri, char **path);
enum ph_sub_kind ph_skills_watch(struct ph_req *r, const char *uri, char **path);

/* ph_resources_watch for a process that serves no request (the hub):
 * uri as principal (NULL: anonymous) with access (NULL: unrestricted) may
 * read it under srv (ph_catalog.c). */
enum ph_sub_kind ph_catalog_watch(struct ph_server *srv, const char *principal,
			       const struct ph_access *access, const char *uri, char **path);

/* The configured access of principal in srv (NULL: unrestricted), setting
 * *denied when it gets none at all (ph_auth_configured_access). */
typedef const struct ph_access *(*ph_access_of_fn)(const struct ph_server *srv, const char *principal,
						   bool *denied);
/* The template parameters of uri (the first template that matches it; {}
 * for a static resource or none). Caller puts. */
struct json_object *ph_resources_params(struct ph_server *srv, const char *uri);
/* subscriptions.authorize of srv: of uris (an array of strings, borrowed),
 * those the handler allows who's principal (with its assigns) to subscribe
 * to, in one call; all of them without the handler, none when it fails or
 * times out (logged). Returns a new array (caller puts). */
struct json_object *ph_subscriptions_authorize(struct ph_server *srv, const struct ph_viewer *who,
					       struct json_object *uris);
/* Of uris (borrowed), those in the "allowed" array of res, a handler's
 * answer (borrowed; NULL: it failed). Without such an array none, after a
 * log line naming principal and why it failed (NULL: "see above"). Returns
 * a new array (caller puts). */
struct json_object *ph_subscriptions_allowed_in(struct json_object *res, struct json_object *uris,
						const char *principal, const char *why);
/* The stdin document of the subscriptions.authorize call that
 * ph_subscriptions_authorize makes, for a caller that runs the handler
 * itself without waiting (the hub). Caller puts. */
struct json_object *ph_subscriptions_authorize_input(struct ph_server *srv, const char *principal,
						     struct json_object *assigns, struct json_object *uris);
/* The same for one uri: true when it is allowed. */
bool ph_subscriptions_allowed(struct ph_req *r, const char *uri);
/* subscriptions/listen (ph_subscribe.c). */
void ph_m_subscriptions_listen(struct ph_req *r, struct ph_outcome *o);
/* The listens a stdio client holds open in this process: the one whose id
 * equals request_id (borrowed; a notifications/cancelled) ends; a reload
 * sends each the list_changed of every kind it asked for whose catalogue
 * differs between old and now, through send (the front's line writer,
 * ctx its own); forget drops them all (the client is gone). kept says how
 * many there are. */
void ph_subscriptions_cancel(struct json_object *request_id);
void ph_subscriptions_reloaded(struct ph_server *old, struct ph_server *now, ph_access_of_fn access_of,
			       int (*send)(void *ctx, const char *json, size_t len), void *ctx);
void ph_subscriptions_forget(void);
/* After a reload to now: the stdio listens watch their resource files
 * again, as their principal may read them now (access_of gives the
 * configured access of a principal, setting *denied when it has none). */
void ph_subscriptions_rewatch(struct ph_server *now, ph_access_of_fn access_of);
/* An application's announcement that uri changed (a handler's
 * resourcesUpdated, phantom_resource_updated) heard by the stdio process:
 * resources/updated to its listens and legacy session subscribed to uri,
 * through send. Returns how many were told. */
size_t ph_subscriptions_announce(const char *uri, int (*send)(void *ctx, const char *json, size_t len),
				 void *ctx);
/* The legacy 2025-11-25 session of the stdio client (the process is the
 * session): an initialize (r) opens it anew (no subscriptions, level
 * debug, every list kind r's capabilities show announced on reload);
 * logging/setLevel sets its level, which later calls read; gen changes
 * with either (a call process forked before holds the old ones);
 * resources/subscribe and unsubscribe (sub) of uri, watched as a listen's
 * resourceSubscriptions are (-32002 for a URI r may not read; at most
 * sessions.max_subscriptions), answered in o. */
void ph_subscriptions_stdio_session(struct ph_req *r);
void ph_subscriptions_stdio_level(enum ph_log_level level);
enum ph_log_level ph_subscriptions_stdio_log_level(void);
unsigned ph_subscriptions_stdio_gen(void);
void ph_subscriptions_stdio_subscribe(struct ph_req *r, const char *uri, bool sub, struct ph_outcome *o);
/* The descriptor to poll for changes of the stdio listens' files (-1:
 * none), and reading them: notifications/resources/updated to the listens
 * subscribed, through send. */
int ph_subscriptions_watch_fd(void);
void ph_subscriptions_watch_read(int (*send)(void *ctx, const char *json, size_t len), void *ctx);
size_t ph_subscriptions_kept(void);


/* The whole catalogue of a kind (every page, unrestricted, without cache
 * hints) as one text, to compare two configurations (ph_catalog.c). Caller
 * frees. */
char *ph_catalog_text(struct ph_server *srv, enum ph_kind kind);
/* Calls handler h out of any request (a hook the hub runs: sessions.on_end)
 * as an invocation of kind with args (borrowed), for principal (NULL:
 * anonymous) with its assigns (borrowed, may be NULL). Returns the
 * handler's answer (caller puts) or NULL when it failed (logged, label). */
struct ph_handler;
struct json_object *ph_catalog_hook(struct ph_server *srv, const struct ph_handler *h, enum phantom_kind kind,
				    const char *label, const char *principal, struct json_object *assigns,
				    struct json_object *args);
/* The exec protocol's stdin document of that same call (caller puts): for
 * a process that runs the handler without waiting for it (the hub). */
struct json_object *ph_catalog_hook_input(struct ph_server *srv, enum phantom_kind kind, const char *label,
					  const char *principal, struct json_object *assigns,
					  struct json_object *args);
/* True when a kind's catalogue differs between two configurations: what a
 * reload announces (list_changed) and what it keeps quiet about. */
bool ph_catalog_changed(struct ph_server *old, struct ph_server *now, enum ph_kind kind);
/* The same for one principal: its catalogue under old (with its allow-lists
 * there, old_access; NULL: unrestricted) and under now (now_access). A
 * reload tells a stream only when what its principal sees changed. */
bool ph_catalog_changed_for(struct ph_server *old, const struct ph_access *old_access, struct ph_server *now,
			    const struct ph_access *now_access, const char *principal, enum ph_kind kind);
/* The same for one stream's viewer: principal (NULL: anonymous), with the
 * allow-lists its authenticator gave (own; NULL: those access_of finds
 * configured for it in each configuration, a principal refused in one of
 * them seeing a change when it is not refused in both) and its assigns
 * (NULL: none), which resource_lists handlers and templates see. */
bool ph_catalog_changed_seen(struct ph_server *old, struct ph_server *now, ph_access_of_fn access_of,
			     const char *principal, const struct ph_access *own, struct json_object *assigns,
			     enum ph_kind kind);
/* Moves the shared change counter of each list kind (tools, prompts,
 * resources) whose catalogue differs, so streams a worker holds (where no
 * hub takes them) announce only what changed. */
void ph_catalog_announce(struct ph_server *old, struct ph_server *now);
#endif
