/* ph_registry.h: the in-memory registry of tools, prompts, resources and
 * resource templates. phantom.yaml (ph_reg_conf.c), modules and embedding
 * programs (the phantom.h API, ph_registry.c) all build this same data; the
 * method handlers (ph_tools.c, ph_prompts.c, ph_resources.c, ph_complete.c)
 * only read it. It is built at load and never changed while serving. */
#ifndef PH_REGISTRY_H
#define PH_REGISTRY_H
#include "first.h"
#include "phantom.h"
#include "ph_exec.h"
#include "ph_schema.h"
#include "ph_param_header.h"
#include "ph_uritemplate.h"
#include <json-c/json.h>

enum ph_hkind { PH_HANDLER_NONE, PH_HANDLER_EXEC, PH_HANDLER_C };

/* How an item is answered when it is not static data. */
struct ph_handler {
	enum ph_hkind kind;
	struct ph_exec_spec exec; /* PH_HANDLER_EXEC */
	phantom_handler_fn fn;    /* PH_HANDLER_C (a module symbol or an embedder's function) */
	void *udata;
	char *symbol;             /* for log lines */
};

/* Completion of one prompt argument or template variable. */
struct ph_completion {
	char *name;
	char **values; /* a static list, filtered by prefix */
	size_t nvalues;
	struct ph_handler h; /* or a handler */
};

/* The largest ttlMs a configuration or a handler may give. */
#define PH_CACHE_TTL_MAX 86400000LL
/* Cache hints: ttl_ms < 0 and scope NULL mean "not set here". */
struct ph_cache {
	long long ttl_ms;
	char *scope;
};

/* A tool's `task` key: off (never a task), optional (a task when the
 * request declares the extension), required (only as a task). */
enum ph_task_mode { PH_TASK_OFF, PH_TASK_OPTIONAL, PH_TASK_REQUIRED };

/* The OAuth scopes an item needs (auth_scopes in phantom.yaml): a call
 * without them is 403 insufficient_scope in auth.mode oauth. */
struct ph_auth_scopes {
	char **v; /* NULL-terminated, NULL when none */
	size_t n;
};

struct ph_tool {
	char *name, *title, *description;
	struct ph_auth_scopes auth_scopes;
	struct json_object *input_schema;  /* as advertised */
	struct json_object *output_schema; /* NULL when none */
	struct json_object *annotations, *icons, *meta;
	struct ph_schema *in, *out;
	struct ph_param_header *headers;   /* x-mcp-header declarations */
	size_t nheaders;
	char **requires;                   /* client capabilities needed */
	size_t nrequires;
	enum ph_task_mode task;            /* runs as a task (io.modelcontextprotocol/tasks) */
	long long task_ttl_ms, task_inline_ms; /* -1: tasks.ttl_ms, tasks.inline_ms */
	bool task_await;                   /* asks for input on fd 3, reads answers on stdin */
	char *app;                         /* apps: entry whose view shows the tool, NULL: none */
	unsigned visibility;               /* PH_VISIBLE_* bits, 0: both (the default) */
	int app_line, meta_line;           /* for problems found once every app is known */
	struct json_object *ui_meta;       /* meta plus _meta.ui and ui/resourceUri (app set) */
	struct ph_handler h;
	struct ph_registry *reg;
};

/* Who may call a tool of an app: the model, the app's view, or both. */
#define PH_VISIBLE_MODEL 1u
#define PH_VISIBLE_APP 2u

enum ph_msg_kind { PH_MSG_TEXT, PH_MSG_IMAGE, PH_MSG_AUDIO, PH_MSG_RESOURCE };

struct ph_prompt_msg {
	char *role;          /* "user" | "assistant" */
	enum ph_msg_kind kind;
	char *text;          /* TEXT: the text; RESOURCE: the uri ({{arg}} substituted) */
	char *data, *mime;   /* IMAGE/AUDIO: base64 of the file, its type */
	char *file;          /* IMAGE/AUDIO: the file, read by ph_registry_prepare */
	int line;
};

struct ph_prompt_arg {
	char *name, *title, *description;
	bool required;
	struct ph_completion comp;
};

struct ph_prompt {
	char *name, *title, *description;
	struct ph_auth_scopes auth_scopes;
	struct json_object *icons;
	struct ph_prompt_arg *args;
	size_t nargs;
	struct ph_prompt_msg *msgs;
	size_t nmsgs;
	struct ph_handler h;
	struct ph_registry *reg;
};

struct ph_resource {
	char *uri, *name, *title, *description, *mime;
	struct ph_auth_scopes auth_scopes;
	struct json_object *annotations, *icons;
	char *data;          /* file or inline text, loaded at start */
	size_t len;
	bool has_data;
	char *file;          /* read by ph_registry_prepare */
	long long file_stamp[3]; /* mtime (ns), size, inode of the file's bytes in data */
	bool file_link;      /* file was a symbolic link when configured: followed */
	int line;
	struct ph_handler h;
	struct ph_cache cache;
	struct json_object *meta; /* an app's {"ui": {...}}: on the list entry and the read item */
	char *app_base;      /* a versioned app's uri without its ?v=DIGEST, else NULL */
	struct ph_registry *reg;
};

/* The content-security lists of an app, in _meta.ui.csp order. */
enum ph_csp { PH_CSP_CONNECT, PH_CSP_RESOURCE, PH_CSP_FRAME, PH_CSP_BASE_URI, PH_CSP__N };

/* An MCP App (apps:): one self-contained HTML file served as a ui://
 * resource (io.modelcontextprotocol/ui). ph_apps_prepare turns it into
 * that resource once the whole configuration is known. */
struct ph_app {
	char *name;
	char *file;              /* resolved against the configuration's directory */
	char *uri;               /* as configured; NULL: ui://<server.name>/<name> */
	char **csp[PH_CSP__N];   /* origins, NULL-terminated; NULL: not configured */
	char **permissions;      /* camera, microphone, geolocation, clipboardWrite */
	char *domain;
	int prefers_border;      /* -1: not configured */
	bool versioned;          /* a digest of the file in the uri */
	int line, file_line, uri_line;
	struct ph_resource *res; /* its resource once made (borrowed from the registry) */
};

/* One handler of resources/list (resource_lists:): it pages the
 * application's own catalogue after the configured resources. */
struct ph_catalog {
	char *name;          /* for allow-lists and log lines */
	struct ph_handler h;
	int line;
};

struct ph_template {
	char *uri_template, *name, *title, *description, *mime;
	struct ph_auth_scopes auth_scopes;
	struct json_object *annotations, *icons;
	struct ph_uritemplate *ut;
	char *dir;           /* directory backing the variables (real path) */
	struct ph_handler h;
	struct ph_completion *comps;
	size_t ncomps;
	struct ph_cache cache;
	struct ph_registry *reg;
};

enum ph_list { PH_LIST_TOOLS, PH_LIST_PROMPTS, PH_LIST_RESOURCES, PH_LIST_TEMPLATES, PH_LIST__N };

struct ph_registry {
	struct ph_tool **tools;
	size_t ntools;
	struct ph_prompt **prompts;
	size_t nprompts;
	struct ph_resource **resources;
	size_t nresources;
	struct ph_template **templates;
	size_t ntemplates;
	struct ph_catalog **catalogs;       /* resource_lists, in order */
	size_t ncatalogs;
	struct ph_app **apps;               /* apps:, in order */
	size_t napps;
	struct ph_catalog *session_end;     /* sessions.on_end, NULL: none */
	struct ph_catalog *sub_authorize;   /* subscriptions.authorize, NULL: none */
	struct ph_cache lists[PH_LIST__N]; /* hints of the list methods */
	void **dl;                          /* module handles, closed on free */
	size_t ndl;
	char err[512];
};

struct ph_registry *ph_registry_new(void);
void ph_registry_free(struct ph_registry *reg);
/* Sets reg->err (printf-style); returns NULL so callers can `return fail(...)`. */
void *ph_registry_fail(struct ph_registry *reg, const char *fmt, ...) PH_PRINTF(2, 3);

/* Lookups (borrowed, NULL when absent). */
struct ph_tool *ph_registry_tool(const struct ph_registry *reg, const char *name);
struct ph_prompt *ph_registry_prompt(const struct ph_registry *reg, const char *name);
struct ph_resource *ph_registry_resource(const struct ph_registry *reg, const char *uri);
struct ph_template *ph_registry_template(const struct ph_registry *reg, const char *uri_template);
/* Fills stamp with what tells a file's versions apart (mtime in ns, size,
 * inode; zeros when it cannot be read) of path itself, or with follow of
 * what its links lead to. Returns true when it could. */
bool ph_resource_stamp(const char *path, bool follow, long long stamp[3]);
/* A file resource whose file changed since it was read (its stamp moved)
 * reads it again, so resources/read serves what resources/updated
 * announced; the old bytes stay when the new ones cannot be read (logged),
 * and when the path has become a symbolic link (never followed here). A
 * file configured as a link (file_link: a Kubernetes ConfigMap volume) is
 * followed: where it leads is the administrator's. */
void ph_resource_refresh(struct ph_resource *r, size_t max);

/* Adding items: each takes ownership of the item (freed on failure) and
 * returns it, or NULL with reg->err set (duplicate name or uri). */
struct ph_tool *ph_registry_add_tool(struct ph_registry *reg, struct ph_tool *t);
struct ph_prompt *ph_registry_add_prompt(struct ph_registry *reg, struct ph_prompt *p);
struct ph_resource *ph_registry_add_resource(struct ph_registry *reg, struct ph_resource *r);
struct ph_template *ph_registry_add_template(struct ph_registry *reg, struct ph_template *t);
void ph_tool_free(struct ph_tool *t);
void ph_prompt_free(struct ph_prompt *p);
void ph_resource_free(struct ph_resource *r);
void ph_template_free(struct ph_template *t);
/* Appends a resource list handler (ownership taken). */
void ph_registry_add_catalog(struct ph_registry *reg, struct ph_catalog *c);
void ph_catalog_free(struct ph_catalog *c);
/* Appends an app (ownership taken), or frees it and returns NULL with
 * reg->err when its name is taken. */
struct ph_app *ph_registry_add_app(struct ph_registry *reg, struct ph_app *a);
struct ph_app *ph_registry_app(const struct ph_registry *reg, const char *name);
void ph_app_free(struct ph_app *a);
/* The resource of a versioned app that uri names with another digest
 * (BASE?v=HEX, or BASE&v=HEX when BASE has a query; 16 hex digits): an
 * earlier version of the file, which hosts may still hold. NULL when none. */
struct ph_resource *ph_registry_app_version(const struct ph_registry *reg, const char *uri);
void ph_handler_clear(struct ph_handler *h);
/* Calls fn for every handler of reg (tools, prompts and their argument
 * completions, resources, templates and their completions, resource
 * lists), with a label for log lines ("tool deploy"). */
void ph_registry_each_handler(const struct ph_registry *reg,
			      void (*fn)(void *ctx, const struct ph_handler *h, const char *label), void *ctx);
void ph_completion_clear(struct ph_completion *c);

/* Sets a tool's input schema (borrowed JSON, a reference is kept): compiles
 * it and extracts its x-mcp-header declarations. Returns 0 or -1 with
 * reg->err. */
int ph_tool_set_input(struct ph_registry *reg, struct ph_tool *t, struct json_object *schema);
int ph_tool_set_output(struct ph_registry *reg, struct ph_tool *t, struct json_object *schema);

/* Moves every item of src after those of dst (src is freed). Returns 0, or
 * -1 with dst->err on a duplicate (then both are freed by the caller). */
int ph_registry_merge(struct ph_registry *dst, struct ph_registry *src);

/* Loads a module and returns the handler function it exports as symbol.
 * A name without '/' is searched in $PHANTOM_MODULE_PATH, then (for the
 * uninstalled program of a build tree only) that tree's
 * examples/module/.libs, then the installed module directory; one with
 * '/' is relative to dir. The module
 * must export phantom_module_abi equal to PHANTOM_ABI. Returns NULL with
 * reg->err. */
phantom_handler_fn ph_registry_module(struct ph_registry *reg, const char *module, const char *symbol,
				      const char *dir);

/* Finishes a registry once the whole configuration is known: reads the
 * files of resources and prompt images (within limits.resource_bytes).
 * Appends problems; returns 0 or -1. (ph_reg_conf.c) */
struct ph_config;
struct ph_conf_problems;
int ph_registry_prepare(struct ph_config *c, struct ph_conf_problems *probs);

/* The parsers of the tools, prompts, resources and resource_templates keys
 * are declared in ph_sections.h. */

/* True for names MCP clients accept: 1-128 of A-Z a-z 0-9 _ - . */
bool ph_registry_name_ok(const char *name);
/* True when any prompt argument or template variable has a completion. */
bool ph_registry_has_completions(const struct ph_registry *reg);
#endif
