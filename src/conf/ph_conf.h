/* ph_conf.h: phantom.yaml. One table of keys (name, type, bounds, default,
 * reloadable, documentation) drives loading, checking (-t) and the reference.
 * Feature sections that hold lists of objects (tools, prompts, ...) register
 * a parser for their key in the same table. */
#ifndef PH_CONF_H
#define PH_CONF_H
#include "first.h"
#include "ph_config.h"

/* Loads a configuration. path NULL gives the built-in defaults. Every problem
 * is appended to probs (caller frees with ph_conf_problems_free). Returns the
 * config (caller frees with ph_conf_free) only when there were no problems. */
struct ph_config *ph_conf_load(const char *path, struct ph_conf_problems *probs);
/* Same, from a buffer; name is used in messages and dir for relative paths. */
struct ph_config *ph_conf_load_buf(const char *name, const char *dir, const char *buf,
				   size_t len, struct ph_conf_problems *probs);
void ph_conf_free(struct ph_config *c);
/* Names of non-reloadable keys whose values differ; caller frees the list items
 * and the array. Returns the count. */
size_t ph_conf_unreloadable_changes(const struct ph_config *a, const struct ph_config *b,
				    char ***names);
/* The registry a section's items go to, made on first use (ph_reg_conf.c). */
struct ph_conf_ctx;
struct ph_registry *ph_conf_registry(struct ph_conf_ctx *x);
/* The auth_scopes key of item (a tool, prompt, resource, template, or a
 * skill of the manifest) into as; problems go to s (ph_reg_conf.c). */
struct ph_ysink;
struct ph_ynode;
struct ph_auth_scopes;
void ph_auth_scopes_parse(struct ph_ysink *s, const struct ph_ynode *item, struct ph_auth_scopes *as);
/* Turns each app into its ui:// resource (reading and checking its file)
 * and gives the tools that name one their _meta.ui; problems are appended
 * to probs (ph_app_conf.c). Returns 0 or -1. */
int ph_apps_prepare(struct ph_config *c, struct ph_conf_problems *probs);
/* The first <script src> or <link href> of an app's HTML (len bytes, not
 * NUL-terminated) whose reference has no scheme, comments skipped: returns
 * its line (1-based) with '<tag attr="ref">' in what (cut at 200 bytes of
 * reference), or 0 when there is none. */
int ph_app_relative_ref(const char *data, size_t len, char *what, size_t wsz);

/* Prints the key table as documentation (name, type, default, bounds). */
void ph_conf_dump_keys(void *fp);
#endif
