/* ph_build.c: the one path from a configuration file to a running server:
 * load, merge a program's own registry, build what is derived, collect
 * every problem. phantom-fcgi -t, the fronts and the embedding API use it. */
#include "first.h"
#include "ph_build.h"
#include "ph_cluster.h"
#include "ph_auth.h"
#include "ph_persist.h"
#include "ph_registry.h"
#include "ph_skills.h"
#include "ph_state.h"
#include "ph_util.h"
#include <stdlib.h>

/* Adds an item's auth_scopes to arr; the first item naming some is *first. */
static void
scopes_of(struct json_object *arr, const struct ph_auth_scopes *as, const char *name, const char *kind,
	  const char **first, const char **first_kind)
{
	if (as->n > 0 && *first == NULL) {
		*first = name;
		*first_kind = kind;
	}
	for (size_t i = 0; i < as->n; i++)
		json_object_array_add(arr, json_object_new_string(as->v[i]));
}

/* Every scope the items' auth_scopes name, into arr (for the RFC 9728
 * document); returns the first item naming some, or NULL: they take effect
 * only with auth.mode oauth, and a key that would silently do nothing is
 * refused. */
static const char *
item_scopes(const struct ph_registry *reg, const struct ph_skills_conf *sc, struct json_object *arr,
	    const char **kind)
{
	const char *first = NULL;
	for (size_t i = 0; reg && i < reg->ntools; i++)
		scopes_of(arr, &reg->tools[i]->auth_scopes, reg->tools[i]->name, "tool", &first, kind);
	for (size_t i = 0; reg && i < reg->nprompts; i++)
		scopes_of(arr, &reg->prompts[i]->auth_scopes, reg->prompts[i]->name, "prompt", &first, kind);
	for (size_t i = 0; reg && i < reg->nresources; i++)
		scopes_of(arr, &reg->resources[i]->auth_scopes, reg->resources[i]->uri, "resource", &first, kind);
	for (size_t i = 0; reg && i < reg->ntemplates; i++)
		scopes_of(arr, &reg->templates[i]->auth_scopes, reg->templates[i]->uri_template, "resource template",
			  &first, kind);
	for (size_t i = 0; sc && i < sc->n; i++)
		scopes_of(arr, &sc->skills[i].auth_scopes, sc->skills[i].path, "skill", &first, kind);
	return first;
}

/* One process serves (stdio): a secret of its own is all it needs, so
 * its lack is not worth a notice on every desktop launch. */
static bool single_process;

void
ph_server_single_process(void)
{
	single_process = true;
}

struct ph_server *
ph_server_new(struct ph_config *conf, struct ph_conf_problems *probs)
{
	struct ph_server *s;
	const char *scoped, *kind = "";
	struct json_object *scopes;
	/* the apps become resources, then files are read: each reports every
	 * problem it finds */
	int apps = ph_apps_prepare(conf, probs), files = ph_registry_prepare(conf, probs);
	if (apps != 0 || files != 0) {
		ph_conf_free(conf);
		return NULL;
	}
	s = ph_xcalloc(1, sizeof *s);
	s->conf = conf;
	scopes = json_object_new_array();
	if ((scoped = item_scopes(conf->registry, conf->skills, scopes, &kind)) != NULL && ph_auth_oauth(s) == NULL) {
		ph_conf_problem(probs, conf->file, 0, "%s %s: auth_scopes are checked only with auth.mode oauth",
				kind, scoped);
		json_object_put(scopes);
		ph_conf_free(conf);
		free(s);
		return NULL;
	}
	if (ph_auth_oauth(s) != NULL)
		ph_auth_metadata_scopes(conf->auth, scopes);
	json_object_put(scopes);
	ph_state_conf_default(conf);
	ph_cluster_configure(conf);
	if (conf->request_state->ephemeral && !single_process)
		ph_log("notice", "request_state has no secret: multi-round requests resume only on this "
		       "host until the next start or reload");
	s->server_info = json_object_new_object();
	json_object_object_add(s->server_info, "name", json_object_new_string(conf->server.name));
	json_object_object_add(s->server_info, "version", json_object_new_string(conf->server.version));
	if (conf->server.title)
		json_object_object_add(s->server_info, "title", json_object_new_string(conf->server.title));
	{
		struct ph_buf b;
		ph_buf_init(&b);
		ph_buf_adds(&b, "\"_meta\":{\"io.modelcontextprotocol/serverInfo\":");
		ph_json_write(&b, s->server_info);
		ph_buf_addc(&b, '}');
		s->server_info_meta = b.data;
		s->server_info_meta_len = b.len;
	}
	return s;
}

void
ph_server_free(struct ph_server *s)
{
	if (s == NULL)
		return;
	/* persistent handlers run the programs of this configuration */
	ph_persist_shutdown();
	json_object_put(s->server_info);
	free(s->server_info_meta);
	ph_conf_free(s->conf);
	free(s);
}

struct ph_server *
ph_server_build(const char *path, struct ph_registry *reg, struct ph_conf_problems *probs)
{
	struct ph_config *c = ph_conf_load(path, probs);
	if (c == NULL) {
		ph_registry_free(reg);
		return NULL;
	}
	if (reg != NULL) {
		if (c->registry == NULL) {
			c->registry = reg;
		} else if (ph_registry_merge(c->registry, reg) != 0) {
			ph_conf_problem(probs, path, 0, "%s", c->registry->err);
			ph_registry_free(reg);
			ph_conf_free(c);
			return NULL;
		}
	}
	return ph_server_new(c, probs);
}

struct ph_server *
ph_server_load(const char *path)
{
	struct ph_conf_problems probs = {0};
	struct ph_server *s = ph_server_build(path, NULL, &probs);
	for (size_t i = 0; i < probs.n; i++)
		ph_log("error", "%s", probs.v[i]);
	ph_conf_problems_free(&probs);
	return s;
}
