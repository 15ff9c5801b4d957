/* ph_method.h: the MCP methods Phantom serves, named once. The core's
 * method table (core/ph_methods.c) is indexed by this enum and holds what
 * each does; the counters (ph_metrics.c) label by these names, and the
 * stdio front (core/ph_line.c) asks which may take their time. A method
 * added here is counted under its own name at once, and served once the
 * core's table has a row for it (tests/unit/test_method checks that every
 * one has). The request carries its method as this enum (ph_req.mid, set
 * with its name by ph_req_set_method), so nothing after the envelope
 * compares names. */
#ifndef PH_METHOD_H
#define PH_METHOD_H
#include "first.h"
#include <stdbool.h>

enum ph_method {
	PH_METHOD_DISCOVER,
	PH_METHOD_INITIALIZE,
	PH_METHOD_PING,
	PH_METHOD_SET_LEVEL,
	PH_METHOD_SUBSCRIBE,
	PH_METHOD_UNSUBSCRIBE,
	PH_METHOD_RESOURCES_READ,
	PH_METHOD_LISTEN,
	PH_METHOD_TOOLS_LIST,
	PH_METHOD_TOOLS_CALL,
	PH_METHOD_PROMPTS_LIST,
	PH_METHOD_PROMPTS_GET,
	PH_METHOD_RESOURCES_LIST,
	PH_METHOD_TEMPLATES_LIST,
	PH_METHOD_COMPLETE,
	PH_METHOD_SKILLS_LIST,
	PH_METHOD_SKILLS_GET,
	PH_METHOD_DIRECTORY_READ,
	PH_METHOD_TASKS_GET,
	PH_METHOD_TASKS_UPDATE,
	PH_METHOD_TASKS_CANCEL,
	PH_METHOD__COUNT
};

/* The method's name on the wire. */
const char *ph_method_name(enum ph_method m);
/* The method named name, or PH_METHOD__COUNT when Phantom serves none of
 * that name. */
enum ph_method ph_method_find(const char *name);
/* Whether the method runs a handler that may take its time (tools/call,
 * prompts/get, resources/read, completion/complete): the stdio front runs
 * those in its call processes. */
bool ph_method_may_wait(enum ph_method m);
/* Whether it is one of the resources/ methods, whose target is a URI. */
bool ph_method_on_resources(enum ph_method m);
#endif
