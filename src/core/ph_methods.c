/* ph_methods.c: the method table (what each MCP method is, in which era,
 * whether its result is cached, what names it in Mcp-Name, and when it is
 * offered at all), the methods the core answers itself (server/discover,
 * and initialize, ping, logging/setLevel and resource subscriptions of
 * 2025-11-25) and the protocol versions they negotiate. */
#include "first.h"
#include "ph_core_int.h"
#include "ph_features.h"
#include "ph_method.h"
#include "ph_park.h"
#include "ph_registry.h"
#include "ph_session.h"
#include "ph_util.h"
#include <stdio.h>
#include <string.h>

static const char *const modern_versions[] = {PH_MODERN_VERSION};
static const char *const legacy_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};

/* The resources capability: configured resources, templates or resource
 * lists, or skills (whose files are resources). Without any, the methods
 * are -32601. */
static bool
has_resources(const struct ph_server *s)
{
	const struct ph_registry *reg = s->conf->registry;
	return (reg && (reg->nresources > 0 || reg->ntemplates > 0 || reg->ncatalogs > 0)) ||
	       ph_skills_configured(s);
}

/* resources/read: skill:// uris belong to the skills extension, the rest to
 * configured resources and templates. */
static void
m_resources_read(struct ph_req *r, struct ph_outcome *o)
{
	const char *uri = ph_jstr(r->params, "uri");
	if (uri == NULL) {
		ph_outcome_error(o, PH_E_PARAMS, NULL, "Invalid params: uri must be a string");
		return;
	}
	r->target = uri;
	if (strncmp(uri, "skill://", 8) == 0)
		ph_skills_read(r, uri, o);
	else
		ph_resources_read(r, uri, o);
}

static struct json_object *
version_list(const char *const *v, size_t n)
{
	struct json_object *a = json_object_new_array();
	for (size_t i = 0; i < n; i++)
		json_object_array_add(a, json_object_new_string(v[i]));
	return a;
}

static void
m_discover(struct ph_req *r, struct ph_outcome *o)
{
	const struct ph_config *c = r->srv->conf;
	o->result = json_object_new_object();
	ph_jset(o->result, "supportedVersions",
			       version_list(modern_versions, PH_ARRAY_LEN(modern_versions)));
	ph_jset(o->result, "capabilities", ph_capabilities(r));
	if (c->server.instructions)
		ph_jset(o->result, "instructions",
				       json_object_new_string(c->server.instructions));
}

bool
ph_looks_like_version(const char *v)
{
	/* YYYY-MM-DD */
	if (strlen(v) != 10)
		return false;
	for (int i = 0; i < 10; i++) {
		if (i == 4 || i == 7) {
			if (v[i] != '-')
				return false;
		} else if (v[i] < '0' || v[i] > '9') {
			return false;
		}
	}
	return true;
}

static void
m_initialize(struct ph_req *r, struct ph_outcome *o)
{
	const struct ph_config *c = r->srv->conf;
	struct json_object *pv = ph_jget(r->params, "protocolVersion");
	const char *want, *chosen = PH_LEGACY_LATEST;
	if (pv == NULL || !json_object_is_type(pv, json_type_string)) {
		ph_outcome_error(o, PH_E_PARAMS, NULL, "Invalid params: protocolVersion must be a string");
		return;
	}
	want = json_object_get_string(pv);
	if (!ph_looks_like_version(want)) {
		struct json_object *d = json_object_new_object();
		ph_jset(d, "supported",
				       version_list(legacy_versions, PH_ARRAY_LEN(legacy_versions)));
		ph_jset(d, "requested", json_object_new_string(want));
		ph_outcome_error(o, PH_E_PARAMS, d, "Unsupported protocol version: %s", want);
		return;
	}
	for (size_t i = 0; i < PH_ARRAY_LEN(legacy_versions); i++)
		if (strcmp(want, legacy_versions[i]) == 0)
			chosen = legacy_versions[i];
	/* over HTTP the answer opens a session (not inside a batch: a batch
	 * has one set of headers for all its answers) */
	if (r->ex->http && r->resp.batch == NULL) {
		free(r->sess.session_issued);
		r->sess.session_issued = ph_session_issue(r, chosen);
	}
	/* over stdio the process is the session: what it may push, from now on */
	if (!r->ex->http && r->resp.batch == NULL) {
		ph_park_stdio_client(ph_jget(r->params, "capabilities"));
		ph_subscriptions_stdio_session(r);
	}
	o->result = json_object_new_object();
	ph_jset(o->result, "protocolVersion", json_object_new_string(chosen));
	ph_jset(o->result, "capabilities", ph_capabilities(r));
	ph_jset(o->result, "serverInfo", json_object_get(r->srv->server_info));
	if (c->server.instructions)
		ph_jset(o->result, "instructions",
				       json_object_new_string(c->server.instructions));
}

static void
m_ping(struct ph_req *r, struct ph_outcome *o)
{
	(void)r;
	o->result = json_object_new_object();
}

static void
m_set_level(struct ph_req *r, struct ph_outcome *o)
{
	struct json_object *l = ph_jget(r->params, "level");
	if (l == NULL || !json_object_is_type(l, json_type_string) ||
	    ph_log_level_parse(json_object_get_string(l)) == PH_LOG_NONE) {
		ph_outcome_error(o, PH_E_PARAMS, NULL, "Invalid params: level must be one of debug, info, "
				 "notice, warning, error, critical, alert, emergency");
		return;
	}
	/* a session behind a hub keeps it there for its later requests on any
	 * worker; over stdio the process is the session and keeps it; without
	 * either the level applies to nothing later */
	if (!r->ex->http && r->resp.batch == NULL)
		ph_subscriptions_stdio_level(ph_log_level_parse(json_object_get_string(l)));
	if (ph_session_has_state(r)) {
		struct json_object *x = json_object_new_object();
		char msg[400];
		enum ph_err e;
		ph_jset(x, "level", json_object_get(l));
		if ((e = ph_session_tell(r, PH_HUBMSG_SESSION_LEVEL, x, msg, sizeof msg)) != PH_OK) {
			ph_outcome_error(o, e, NULL, "%s", msg);
			return;
		}
	}
	o->result = json_object_new_object();
}

/* 2025 resources/subscribe and resources/unsubscribe: {} for a uri. On a
 * session behind a hub the hub keeps the subscription and sends
 * notifications/resources/updated on the session's GET streams, over stdio
 * the process itself on stdout (ph_subscribe.c); a resource
 * this principal may not read (or that does not exist) gets -32002, as
 * resources/read would. Without a session there is no stream to send them
 * on, so a subscription is accepted and nothing more happens (2026 clients
 * use subscriptions/listen). */
static void
m_resources_subscription(struct ph_req *r, struct ph_outcome *o)
{
	const char *uri = ph_jstr(r->params, "uri");
	bool sub = r->mid == PH_METHOD_SUBSCRIBE;
	if (uri == NULL) {
		ph_outcome_error(o, PH_E_PARAMS, NULL, "Invalid params: uri must be a string");
		return;
	}
	r->target = uri;
	if (!r->ex->http) { /* stdio: the process watches them itself */
		ph_subscriptions_stdio_subscribe(r, uri, sub, o);
		return;
	}
	if (ph_session_has_state(r)) {
		struct json_object *x = json_object_new_object();
		char *path = NULL, msg[400];
		enum ph_err e;
		if (sub && (ph_resources_watch(r, uri, &path) == PH_SUB_NONE || !ph_subscriptions_allowed(r, uri))) {
			json_object_put(x);
			free(path);
			ph_outcome_not_found(r, o, uri);
			return;
		}
		ph_jset(x, "uri", json_object_new_string(uri));
		if (path)
			ph_jset(x, "path", json_object_new_string(path));
		free(path);
		if ((e = ph_session_tell(r, sub ? PH_HUBMSG_SESSION_SUB : PH_HUBMSG_SESSION_UNSUB, x, msg,
					    sizeof msg)) != PH_OK) {
			ph_outcome_error(o, e, NULL, "%s", msg);
			return;
		}
	}
	o->result = json_object_new_object();
}

static const struct method methods[PH_METHOD__COUNT] = {
	[PH_METHOD_DISCOVER] = {M_MODERN | M_CACHEABLE, m_discover, NULL},
	[PH_METHOD_INITIALIZE] = {M_LEGACY, m_initialize, NULL},
	[PH_METHOD_PING] = {M_LEGACY, m_ping, NULL},
	[PH_METHOD_SET_LEVEL] = {M_LEGACY, m_set_level, NULL},
	[PH_METHOD_SUBSCRIBE] = {M_LEGACY, m_resources_subscription, NULL},
	[PH_METHOD_UNSUBSCRIBE] = {M_LEGACY, m_resources_subscription, NULL},
	[PH_METHOD_RESOURCES_READ] = {M_MODERN | M_LEGACY | M_URI | M_CACHEABLE | M_MRTR, m_resources_read, has_resources},
	[PH_METHOD_LISTEN] = {M_MODERN, ph_m_subscriptions_listen, NULL},
	[PH_METHOD_TOOLS_LIST] = {M_MODERN | M_LEGACY | M_CACHEABLE, ph_tools_list, ph_tools_available},
	[PH_METHOD_TOOLS_CALL] = {M_MODERN | M_LEGACY | M_NAME | M_MRTR, ph_tools_call, ph_tools_available},
	[PH_METHOD_PROMPTS_LIST] = {M_MODERN | M_LEGACY | M_CACHEABLE, ph_prompts_list, ph_prompts_available},
	[PH_METHOD_PROMPTS_GET] = {M_MODERN | M_LEGACY | M_NAME | M_MRTR, ph_prompts_get, ph_prompts_available},
	[PH_METHOD_RESOURCES_LIST] = {M_MODERN | M_LEGACY | M_CACHEABLE, ph_resources_list, has_resources},
	[PH_METHOD_TEMPLATES_LIST] = {M_MODERN | M_LEGACY | M_CACHEABLE, ph_templates_list, has_resources},
	[PH_METHOD_COMPLETE] = {M_MODERN | M_LEGACY, ph_complete, ph_complete_available},
	[PH_METHOD_TASKS_GET] = {M_MODERN | M_TASK, ph_tasks_get, ph_tasks_available},
	[PH_METHOD_TASKS_UPDATE] = {M_MODERN | M_TASK, ph_tasks_update, ph_tasks_available},
	[PH_METHOD_TASKS_CANCEL] = {M_MODERN | M_TASK, ph_tasks_cancel, ph_tasks_available},
	[PH_METHOD_SKILLS_LIST] = {M_MODERN | M_LEGACY | M_CACHEABLE, ph_skills_list, ph_skills_configured},
	[PH_METHOD_SKILLS_GET] = {M_MODERN | M_LEGACY | M_CACHEABLE, ph_skills_get, ph_skills_configured},
	/* cacheable too: the SDK client (2.4.0) requires ttlMs/cacheScope here */
	[PH_METHOD_DIRECTORY_READ] = {M_MODERN | M_LEGACY | M_CACHEABLE, ph_skills_directory_read,
	 ph_skills_configured},
};

const struct method *
ph_find_method(enum ph_method i, bool legacy, const struct ph_server *s)
{
	const struct method *m;
	if (i >= PH_METHOD__COUNT)
		return NULL;
	m = &methods[i];
	if (!(m->flags & (legacy ? M_LEGACY : M_MODERN)))
		return NULL;
	if (m->available && !m->available(s))
		return NULL;
	return m;
}

bool
ph_method_has_row(enum ph_method i)
{
	return i < PH_METHOD__COUNT && methods[i].fn != NULL && (methods[i].flags & (M_MODERN | M_LEGACY)) != 0;
}

bool
ph_is_modern_version(const char *v)
{
	for (size_t i = 0; i < PH_ARRAY_LEN(modern_versions); i++)
		if (strcmp(v, modern_versions[i]) == 0)
			return true;
	return false;
}

struct json_object *
ph_modern_versions(void)
{
	return version_list(modern_versions, PH_ARRAY_LEN(modern_versions));
}
