/* ph_method.c: the names of the methods (ph_method.h). */
#include "first.h"
#include "ph_method.h"
#include <string.h>

static const struct {
	const char *name;
	bool may_wait;
	bool on_resources; /* a resources/ method: its target is a URI */
} methods[] = {
	[PH_METHOD_DISCOVER] = {"server/discover", false, false},
	[PH_METHOD_INITIALIZE] = {"initialize", false, false},
	[PH_METHOD_PING] = {"ping", false, false},
	[PH_METHOD_SET_LEVEL] = {"logging/setLevel", false, false},
	[PH_METHOD_SUBSCRIBE] = {"resources/subscribe", false, true},
	[PH_METHOD_UNSUBSCRIBE] = {"resources/unsubscribe", false, true},
	[PH_METHOD_RESOURCES_READ] = {"resources/read", true, true},
	[PH_METHOD_LISTEN] = {"subscriptions/listen", false, false},
	[PH_METHOD_TOOLS_LIST] = {"tools/list", false, false},
	[PH_METHOD_TOOLS_CALL] = {"tools/call", true, false},
	[PH_METHOD_PROMPTS_LIST] = {"prompts/list", false, false},
	[PH_METHOD_PROMPTS_GET] = {"prompts/get", true, false},
	[PH_METHOD_RESOURCES_LIST] = {"resources/list", false, true},
	[PH_METHOD_TEMPLATES_LIST] = {"resources/templates/list", false, true},
	[PH_METHOD_COMPLETE] = {"completion/complete", true, false},
	[PH_METHOD_SKILLS_LIST] = {"skills/list", false, false},
	[PH_METHOD_SKILLS_GET] = {"skills/get", false, false},
	[PH_METHOD_DIRECTORY_READ] = {"resources/directory/read", false, true},
	[PH_METHOD_TASKS_GET] = {"tasks/get", false, false},
	[PH_METHOD_TASKS_UPDATE] = {"tasks/update", false, false},
	[PH_METHOD_TASKS_CANCEL] = {"tasks/cancel", false, false},
};
_Static_assert(PH_ARRAY_LEN(methods) == PH_METHOD__COUNT, "a name for every enum ph_method");

const char *
ph_method_name(enum ph_method m)
{
	return m < PH_METHOD__COUNT ? methods[m].name : NULL;
}

enum ph_method
ph_method_find(const char *name)
{
	for (size_t i = 0; i < PH_METHOD__COUNT; i++)
		if (strcmp(methods[i].name, name) == 0)
			return (enum ph_method)i;
	return PH_METHOD__COUNT;
}

bool
ph_method_may_wait(enum ph_method m)
{
	return m < PH_METHOD__COUNT && methods[m].may_wait;
}

bool
ph_method_on_resources(enum ph_method m)
{
	return m < PH_METHOD__COUNT && methods[m].on_resources;
}
