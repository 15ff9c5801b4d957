/* ph_apps.c: MCP Apps (io.modelcontextprotocol/ui) at request time. The
 * configuration layer (ph_app_conf.c) has already made each app a ui://
 * resource and given its tools their _meta.ui; what is left per request is
 * the capability and whether this client gets the metadata. */
#include "first.h"
#include "ph_features.h"
#include "ph_registry.h"
#include "ph_util.h"
#include <string.h>

#define UI_EXT "io.modelcontextprotocol/ui"

bool
ph_apps_meta_shown(const struct ph_req *r)
{
	if (strcmp(r->srv->conf->server.app_meta, "declared") != 0)
		return true;
	/* 2026-07-28: the request's own _meta; a legacy session: its initialize */
	return ph_jget(ph_jget(r->client_caps, "extensions"), UI_EXT) != NULL;
}

/* capabilities.extensions["io.modelcontextprotocol/ui"] = {} with tools and
 * resources, when this principal may read an app's resource. The
 * 2025-11-25 schema has no extensions member: there it is an extra key of
 * the same shape, which is where the extension's hosts look for it. */
void
ph_apps_capabilities(struct ph_req *r, struct json_object *caps)
{
	const struct ph_registry *reg = r->srv->conf->registry;
	bool any = false;
	for (size_t i = 0; reg && i < reg->napps && !any; i++)
		any = reg->apps[i]->res != NULL && ph_access_allowed(r, PH_KIND_RESOURCE, reg->apps[i]->res->uri);
	if (!any)
		return;
	if (ph_jget(caps, "tools") == NULL)
		json_object_object_add(caps, "tools", json_object_new_object());
	if (ph_jget(caps, "resources") == NULL)
		json_object_object_add(caps, "resources", json_object_new_object());
	json_object_object_add(ph_caps_extensions(caps), UI_EXT, json_object_new_object());
}
