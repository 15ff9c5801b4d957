/* ph_capabilities.c: the server capabilities one request may see, each
 * feature adding its own (server/discover, initialize, listen streams). */
#include "first.h"
#include "ph_features.h"
#include "ph_shared.h"
#include "ph_util.h"

/* Capabilities derived from what is configured and visible to this
 * request's principal; each feature adds its own. */
struct json_object *
ph_capabilities(struct ph_req *r)
{
	static const char *const listed[] = {"tools", "prompts", "resources"};
	struct json_object *caps = json_object_new_object();
	json_object_object_add(caps, "logging", json_object_new_object());
	ph_tools_capabilities(r, caps);
	ph_prompts_capabilities(r, caps);
	ph_complete_capabilities(r, caps);
	ph_resources_capabilities(r, caps);
	ph_skills_capabilities(r, caps);
	ph_tasks_capabilities(r, caps);
	ph_apps_capabilities(r, caps);
	/* 2026-07-28 delivers list changes on subscriptions/listen streams, a
	 * legacy session on its GET stream, which the hub holds: only a
	 * session issued over HTTP behind a master gets them promised, and a
	 * stdio client, whose process tells it itself */
	bool legacy_streams = r->legacy && ((r->sess.session_issued != NULL && r->ex->http &&
					     r->ex->ops->handoff != NULL && ph_hub_fd >= 0) || !r->ex->http);
	for (size_t i = 0; (!r->legacy || legacy_streams) && i < PH_ARRAY_LEN(listed); i++) {
		struct json_object *c = ph_jget(caps, listed[i]);
		if (c != NULL)
			json_object_object_add(c, "listChanged", json_object_new_boolean(1));
	}
	/* resourceSubscriptions are watched by the hub, which only a master
	 * runs, and by the stdio process itself (ph_subscribe.c acknowledges
	 * them only there) */
	if (((!r->legacy && ((ph_hub_fd >= 0 && r->ex->http) || !r->ex->http)) || legacy_streams) &&
	    ph_jget(caps, "resources") != NULL)
		json_object_object_add(ph_jget(caps, "resources"), "subscribe", json_object_new_boolean(1));
	return caps;
}
