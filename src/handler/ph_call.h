/* ph_call.h: running a handler (exec or C) for a request, and the shapes of
 * what comes back. Both kinds of handler end up as the same JSON object
 * (the exec protocol's result shapes, DESIGN.md §1), which the feature files
 * then check and turn into the MCP result. */
#ifndef PH_CALL_H
#define PH_CALL_H
#include "first.h"
#include "ph_registry.h"
#include "ph_server.h"

/* What is being asked of a handler. Everything is borrowed. */
struct ph_invocation {
	enum phantom_kind kind;         /* what the handler is called for */
	const char *label;              /* "tool deploy", for log lines */
	const char *name;               /* tool/prompt name (NULL for resources) */
	const char *uri;                /* resources: the uri read */
	struct json_object *arguments;  /* never NULL */
	struct json_object *extra;      /* more members for the exec input, or NULL */
	const char *comp_arg, *comp_value; /* completion */
	const char *default_mime;       /* resources: the configured type */
	bool embedded;                  /* read for another item (a prompt's resource):
					 * it gets no state or inputResponses */
};

/* The kinds: one past the last of enum phantom_kind. The tables indexed
 * by kind (its words, ph_call.c; its result builders, ph_result.c) assert
 * that they have this many rows. */
#define PH_CALL_KINDS (PHANTOM_KIND_SESSION_END + 1)

/* The word for kind ("tool", "resource_list", ...): the exec input's
 * "kind" and phantom_call_kind. Static string; "" for no kind. */
const char *ph_call_kind_name(enum phantom_kind kind);

/* Runs h. Returns the handler's result object (caller puts), or NULL when
 * the handler failed; the details are in the server log, never in the
 * result. An "inputRequired" answer is returned as it is (see
 * ph_call_input_required). */
struct json_object *ph_call_handler(struct ph_req *r, const struct ph_handler *h,
				    const struct ph_invocation *inv);

/* Handles a result carrying "inputRequired" (a handler asking the client
 * for input): ph_mrtr_answer turns it into the input_required result or an
 * error. Returns true after setting o when it did. */
bool ph_call_input_required(struct ph_req *r, struct json_object *res, const char *label,
			    struct ph_outcome *o);

/* Checks one content block (text, image, audio, resource_link, resource).
 * Returns true, or false with a reason in why. */
bool ph_content_valid(struct json_object *block, char *why, size_t n);

/* Exec limits from the configuration. */
void ph_call_exec_limits(const struct ph_req *r, struct ph_exec_limits *lim);

/* The document an exec handler reads on stdin for inv (phantom.yaml(5),
 * EXEC HANDLERS). Caller puts. A task's process gets it from the record. */
struct json_object *ph_call_exec_input(struct ph_req *r, const struct ph_invocation *inv);
/* What an exec handler (prog, for the log) wrote on stdout (text, len
 * bytes) as its answer: one JSON object of at most depth levels, valid
 * UTF-8. Returns it (caller puts) or NULL after logging why, naming label. */
struct json_object *ph_call_exec_answer(const char *label, const char *prog, const char *text, size_t len,
					int depth);

/* The tool-call error result {content:[{type:text,text}], isError:true}. */
struct json_object *ph_tool_error_result(const char *text);
#endif
