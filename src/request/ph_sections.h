/* ph_sections.h: the parsers of phantom.yaml's feature sections, as the
 * configuration key table (conf/ph_conf.c) names them. Prototypes only, so the
 * table needs no feature's header. Each parser gets the section's node and,
 * when the section is a mapping, its keys already read through their rows
 * of the table into the section's options struct (x->opts, ph_config.h); it
 * reports problems with the node's lines and returns 0 or -1. Each free
 * function releases what its parser stored in the configuration. */
#ifndef PH_SECTIONS_H
#define PH_SECTIONS_H

struct ph_conf_ctx;
struct ph_config;
struct ph_ynode;

/* request_state (ph_state.c); x->opts: struct ph_state_opts */
int ph_state_conf_parse(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n);
void ph_state_conf_free(struct ph_config *c);

/* cluster (ipc/ph_cluster.c); x->opts: struct ph_cluster_opts. The check runs
 * after the whole file is read: cluster needs request_state's secret. */
int ph_cluster_conf_parse(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n);
void ph_cluster_conf_free(struct ph_config *c);
void ph_cluster_conf_check(struct ph_config *c, struct ph_conf_problems *probs, const char *name);

/* auth (ph_auth.c); x->opts: struct ph_auth_opts */
int ph_auth_conf_parse(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n);
void ph_auth_conf_free(struct ph_config *c);

/* tools, prompts, resources, resource_templates (ph_reg_conf.c); x->opts:
 * struct ph_list_opts. The four share one registry and its free function. */
int ph_conf_tools(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n);
int ph_conf_prompts(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n);
int ph_conf_resources(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n);
int ph_conf_templates(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n);
/* resource_lists (ph_reg_conf.c): a plain list, no x->opts; same registry */
int ph_conf_resource_lists(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n);
/* sessions.on_end: the handler told of each ended legacy session. */
int ph_conf_session_end(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n);
/* subscriptions.authorize: the handler asked which resource subscriptions
 * a principal may hold. */
int ph_conf_sub_authorize(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n);
void ph_conf_registry_free(struct ph_config *c);
/* apps (ph_app_conf.c): a mapping of app names, no x->opts; same registry */
int ph_conf_apps(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n);

/* skills (ph_skill_load.c); x->opts: struct ph_skills_opts */
int ph_skills_conf_parse(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n);
void ph_skills_conf_free(struct ph_config *c);
#endif
