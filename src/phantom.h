/* phantom.h: the public API of libphantom, for C modules and for programs
 * that embed the server. Everything here is stable within PHANTOM_ABI.
 *
 * The registry is data: phantom.yaml, a module and an embedding program all
 * describe tools, prompts, resources and resource templates through these
 * calls, and the server answers MCP requests from the registry it was given.
 *
 * Ownership: strings passed in are copied; json_object values passed to a
 * function named *_take are owned by the callee afterwards, every other
 * json_object is borrowed. Pointers returned by accessors are borrowed and
 * valid until the handler returns. */
#ifndef PHANTOM_H
#define PHANTOM_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on every incompatible change to this header (a function removed or
 * its signature or meaning changed, a type's layout changed); modules
 * export it with PHANTOM_MODULE() and are refused at load when it differs.
 * Additions do not bump it: they bump libphantom's -version-info (current
 * and age), so a module built against an older header still loads. The
 * README's "Modules and the API" says the policy in full. */
#define PHANTOM_ABI 1

/* Attributes the compiler checks in the caller: an argument that must not
 * be NULL, a result that must be used (it is owned, or it says whether the
 * call failed), printf-style formats. Empty for compilers without them. */
#if defined(__GNUC__) || defined(__clang__)
#define PHANTOM_NONNULL(...) __attribute__((nonnull(__VA_ARGS__)))
#define PHANTOM_MUST_USE __attribute__((warn_unused_result))
#define PHANTOM_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define PHANTOM_EXPORT __attribute__((visibility("default")))
#else
#define PHANTOM_NONNULL(...)
#define PHANTOM_MUST_USE
#define PHANTOM_PRINTF(f, a)
#define PHANTOM_EXPORT
#endif

struct json_object; /* json-c: arguments and structured content are JSON */

typedef struct ph_registry phantom_registry;
typedef struct ph_server phantom_server;
typedef struct phantom_call phantom_call;
typedef struct phantom_result phantom_result;
typedef struct ph_tool phantom_tool;
typedef struct ph_prompt phantom_prompt;
typedef struct ph_resource phantom_resource;
typedef struct ph_template phantom_template;

/* Every handler has this shape: it gets the call (borrowed) and the user data
 * given when it was registered, and returns a result built with the
 * phantom_result_* functions (ownership passes to the library). NULL means
 * the handler failed: the client gets a short generic error. */
typedef phantom_result *(*phantom_handler_fn)(phantom_call *call, void *udata);

/* Put PHANTOM_MODULE(); once in a module's source. The loader refuses a
 * module without it or built against another ABI. It stays visible when
 * the module is built with -fvisibility=hidden; so must the handlers the
 * configuration names (mark them PHANTOM_EXPORT then). */
#define PHANTOM_MODULE() PHANTOM_EXPORT const unsigned phantom_module_abi = PHANTOM_ABI

/* What a handler is called for (phantom_call_kind_id). New kinds are added
 * at the end, never renumbered; a handler that meets one it does not know
 * should fail the call (return NULL). */
enum phantom_kind {
	PHANTOM_KIND_TOOL = 1,      /* tools/call, and a task's run of a tool */
	PHANTOM_KIND_PROMPT,        /* prompts/get */
	PHANTOM_KIND_RESOURCE,      /* resources/read of a resource or template */
	PHANTOM_KIND_COMPLETION,    /* completion/complete */
	PHANTOM_KIND_AUTH,          /* auth.mode module: every HTTP request */
	PHANTOM_KIND_RESOURCE_LIST, /* a page of resources/list (resource_lists) */
	PHANTOM_KIND_SKILL,         /* a dynamic skill's file */
	PHANTOM_KIND_SKILL_LIST,    /* a dynamic skill list */
	PHANTOM_KIND_SUBSCRIPTION,  /* subscriptions.authorize */
	PHANTOM_KIND_SESSION_END,   /* sessions.on_end */
};

/* Returns the library version string ("0.1.0"). */
const char *phantom_version(void);
/* Returns the ABI the library was built with (PHANTOM_ABI). */
unsigned phantom_abi(void);

/* ---- building a registry ------------------------------------------------ */

/* A new empty registry; free with phantom_registry_free unless handed to
 * phantom_server_new. */
phantom_registry *phantom_registry_new(void) PHANTOM_MUST_USE;
void phantom_registry_free(phantom_registry *reg);
/* The reason the last failing call on reg failed ("" when none). */
const char *phantom_registry_error(const phantom_registry *reg) PHANTOM_NONNULL(1);

/* Adds a tool. input_schema is a JSON Schema text whose root is an object
 * schema, or NULL for a tool without arguments. Returns the tool (owned by
 * the registry) or NULL on a bad name, a duplicate or a bad schema. */
phantom_tool *phantom_tool_add(phantom_registry *reg, const char *name, const char *description,
			       const char *input_schema, phantom_handler_fn fn, void *udata) PHANTOM_NONNULL(1);
int phantom_tool_set_title(phantom_tool *t, const char *title) PHANTOM_NONNULL(1);
/* JSON texts; 0 on success, -1 when the text is not valid. */
int phantom_tool_set_output_schema(phantom_tool *t, const char *schema) PHANTOM_NONNULL(1);
int phantom_tool_set_annotations(phantom_tool *t, const char *annotations) PHANTOM_NONNULL(1);
/* The tool needs this client capability ("elicitation", "sampling",
 * "roots"): a modern request that does not declare it gets -32021. */
int phantom_tool_require_capability(phantom_tool *t, const char *capability) PHANTOM_NONNULL(1);

/* Adds a prompt answered by fn. Returns NULL on a bad name or a duplicate. */
phantom_prompt *phantom_prompt_add(phantom_registry *reg, const char *name, const char *description,
				   phantom_handler_fn fn, void *udata) PHANTOM_NONNULL(1);
int phantom_prompt_add_argument(phantom_prompt *p, const char *name, const char *description,
				int required) PHANTOM_NONNULL(1);
/* Completion for one argument: fn is called with a completion call. */
int phantom_prompt_complete(phantom_prompt *p, const char *argument, phantom_handler_fn fn,
			    void *udata) PHANTOM_NONNULL(1);

/* Adds a static resource with fixed text, or answered by fn when text is
 * NULL. mime_type may be NULL. Returns NULL on a bad uri or a duplicate. */
phantom_resource *phantom_resource_add(phantom_registry *reg, const char *uri, const char *name,
				       const char *mime_type, const char *text,
				       phantom_handler_fn fn, void *udata) PHANTOM_NONNULL(1);
int phantom_resource_set_description(phantom_resource *r, const char *description) PHANTOM_NONNULL(1);
/* Cache hints of resources/read for this resource (ttl_ms >= 0, scope
 * "public" or "private"). */
int phantom_resource_set_cache(phantom_resource *r, long long ttl_ms, const char *scope) PHANTOM_NONNULL(1);

/* Adds a resource template (RFC 6570 level 1: literal text and {var}) whose
 * reads are answered by fn; the variables arrive as the call's arguments. */
phantom_template *phantom_template_add(phantom_registry *reg, const char *uri_template,
				       const char *name, const char *mime_type,
				       phantom_handler_fn fn, void *udata) PHANTOM_NONNULL(1);
int phantom_template_set_description(phantom_template *t, const char *description) PHANTOM_NONNULL(1);
int phantom_template_complete(phantom_template *t, const char *variable, phantom_handler_fn fn,
			      void *udata) PHANTOM_NONNULL(1);

/* ---- inside a handler --------------------------------------------------- */

/* The kind as a word: "tool", "prompt", "resource", "completion", "auth",
 * "resource_list", "skill", "skill_list", "subscription" or "session_end"
 * (enum phantom_kind, in order). */
const char *phantom_call_kind(const phantom_call *c) PHANTOM_NONNULL(1);
/* The kind as the enum; 0 for a kind this header does not name. */
enum phantom_kind phantom_call_kind_id(const phantom_call *c) PHANTOM_NONNULL(1);
/* Tool or prompt name; for completion the prompt name or the template. */
const char *phantom_call_name(const phantom_call *c) PHANTOM_NONNULL(1);
/* The uri being read (resources), else NULL. */
const char *phantom_call_uri(const phantom_call *c) PHANTOM_NONNULL(1);
/* The arguments object (tools: validated, defaults applied; prompts: the
 * string arguments; templates: the variables; completion: the context
 * arguments). Never NULL. */
struct json_object *phantom_call_arguments(const phantom_call *c) PHANTOM_NONNULL(1);
/* Convenience readers of one argument; def when absent or of another type. */
const char *phantom_arg_string(const phantom_call *c, const char *name, const char *def) PHANTOM_NONNULL(1, 2);
long long phantom_arg_int(const phantom_call *c, const char *name, long long def) PHANTOM_NONNULL(1, 2);
double phantom_arg_double(const phantom_call *c, const char *name, double def) PHANTOM_NONNULL(1, 2);
int phantom_arg_bool(const phantom_call *c, const char *name, int def) PHANTOM_NONNULL(1, 2);
/* Completion calls: the argument being completed and its current value. */
const char *phantom_complete_argument(const phantom_call *c) PHANTOM_NONNULL(1);
const char *phantom_complete_value(const phantom_call *c) PHANTOM_NONNULL(1);

/* The authenticated principal, or NULL when none. */
const char *phantom_call_principal(const phantom_call *c) PHANTOM_NONNULL(1);
/* The W3C trace context of the call, to continue the trace: field is
 * "traceparent" (with this request's span as the parent, the value exec
 * handlers get as TRACEPARENT), "tracestate" or "baggage" (as the client
 * sent them in _meta or the headers). Borrowed for the call; NULL when
 * the client sent none (or an invalid traceparent). */
const char *phantom_call_trace(const phantom_call *c, const char *field) PHANTOM_NONNULL(1);
/* The attributes the authenticator returned with the principal ("assigns",
 * an object, borrowed; {} when none): plan, team, account... */
struct json_object *phantom_call_assigns(const phantom_call *c) PHANTOM_NONNULL(1);
/* auth.mode oauth: the scopes the caller's access token grants, with the
 * implications of auth.oauth.scope_implies added (an array of strings,
 * borrowed; [] in other modes). The token itself is never passed on. */
struct json_object *phantom_call_scopes(const phantom_call *c) PHANTOM_NONNULL(1);
/* A value of the assigns as a string (strings as they are, numbers and
 * booleans in JSON), or def when absent, an object or array, or a string
 * holding U+0000 (which a C string would cut short). */
const char *phantom_call_assign(const phantom_call *c, const char *name, const char *def) PHANTOM_NONNULL(1);
/* Resource lists (resource_lists: in phantom.yaml): the handler's own cursor
 * of the page asked for (NULL: the first page) and the most entries to
 * return. The page is returned as structuredContent
 * {"resources": [...], "nextCursor": "..."} (phantom_result_structured_*). */
const char *phantom_call_cursor(const phantom_call *c) PHANTOM_NONNULL(1);
long long phantom_call_limit(const phantom_call *c) PHANTOM_NONNULL(1);
/* The client capabilities declared for this request ({} when none). */
struct json_object *phantom_call_client_capabilities(const phantom_call *c) PHANTOM_NONNULL(1);
/* 1 when the client declared the capability ("elicitation", "sampling"...). */
int phantom_call_has_capability(const phantom_call *c, const char *capability) PHANTOM_NONNULL(1, 2);

/* Multi-round requests (tools, prompts and resources; phantom.yaml(5),
 * MULTI-ROUND REQUESTS). On the client's retry of a call that answered with
 * phantom_result_input_request*, Phantom has opened and verified the sealed
 * requestState (same principal, method, target and arguments, not expired)
 * before calling the handler again. */
/* 1 on such a verified retry, else 0. */
int phantom_call_resumed(const phantom_call *c) PHANTOM_NONNULL(1);
/* The state given with phantom_result_state_* in the previous round, or
 * NULL (none, or not a retry). Borrowed. */
struct json_object *phantom_call_state(const phantom_call *c) PHANTOM_NONNULL(1);
/* The client's inputResponses object, or NULL when the request carries
 * none. Unknown keys are the handler's to ignore. Borrowed. */
struct json_object *phantom_call_input_responses(const phantom_call *c) PHANTOM_NONNULL(1);
/* The response under key (an elicitation result {action, content}, a
 * sampling result or a roots result), or NULL. Borrowed. */
struct json_object *phantom_call_input_response(const phantom_call *c, const char *key) PHANTOM_NONNULL(1);
/* The content of an accepted elicitation under key ({"action": "accept",
 * "content": {...}}), or NULL when it is absent, declined or cancelled.
 * Borrowed. */
struct json_object *phantom_call_accepted(const phantom_call *c, const char *key) PHANTOM_NONNULL(1);
/* 1 when there is no second round: a 2025-11-25 request outside a session
 * whose client takes requests pushed mid-call; a URL elicitation becomes
 * error -32042 and any other request -32021, so handlers take their
 * fallback instead. 0 under 2026-07-28 and on such a session (the requests
 * are pushed on the call's stream and the handler is called again). */
int phantom_call_legacy(const phantom_call *c) PHANTOM_NONNULL(1);
/* 1 once the client has gone away or cancelled: stop and return NULL. Long
 * loops call it about once a second (it also keeps an SSE stream alive). */
int phantom_call_cancelled(phantom_call *c) PHANTOM_NONNULL(1);
/* notifications/progress (only when the client asked for progress; values
 * must increase). total <= 0 means unknown; message may be NULL. Returns -1
 * when the request was cancelled. */
int phantom_progress(phantom_call *c, double progress, double total, const char *message) PHANTOM_NONNULL(1);
/* notifications/message at level ("debug" ... "emergency"), sent only when
 * the request asked for that level. Returns -1 when cancelled. */
int phantom_log(phantom_call *c, const char *level, const char *fmt, ...)
	PHANTOM_PRINTF(3, 4) PHANTOM_NONNULL(1, 3);
/* notifications/resources/updated for uri, to every subscriptions/listen
 * stream subscribed to it (as its principal may read it): call it when a
 * resource that is not a file changed (the hub watches files itself). Any
 * handler may call it, for any resource. Returns 0, or -1 when no hub runs
 * (no master: CGI, stdio, a single process) or it did not take it. */
int phantom_resource_updated(phantom_call *c, const char *uri) PHANTOM_NONNULL(1, 2);
/* A line in the server log (stderr), never sent to the client. */
void phantom_log_server(const char *level, const char *fmt, ...)
	PHANTOM_PRINTF(2, 3) PHANTOM_NONNULL(2);

/* ---- results ------------------------------------------------------------ */

/* A new empty result; the builders below add to it and return 0, or -1 on
 * bad input (the result stays usable). Every string must be valid UTF-8:
 * text that is not makes its builder return -1 and the call fail (as when
 * the handler returns NULL), and so does any other string of the result
 * that is not, such as a structured value or a link's name. For tools each builder adds a content
 * block; for prompts each block becomes a message with the current role; for
 * resources text and embedded blocks become contents entries. */
phantom_result *phantom_result_new(void) PHANTOM_MUST_USE;
void phantom_result_free(phantom_result *res);
int phantom_result_text(phantom_result *res, const char *text);
/* Binary content, base64-encoded by the library. */
int phantom_result_image(phantom_result *res, const void *data, size_t len, const char *mime_type);
int phantom_result_audio(phantom_result *res, const void *data, size_t len, const char *mime_type);
int phantom_result_resource_link(phantom_result *res, const char *uri, const char *name,
				 const char *description, const char *mime_type);
/* An embedded resource: text when text is not NULL, else the bytes as blob. */
int phantom_result_embedded(phantom_result *res, const char *uri, const char *mime_type,
			    const char *text, const void *blob, size_t blob_len);
/* structuredContent (ownership taken); a text block with its JSON is added
 * when no other content is given. */
int phantom_result_structured_take(phantom_result *res, struct json_object *value);
/* structuredContent from a JSON text. */
int phantom_result_structured_json(phantom_result *res, const char *json);
/* A tool error the model can read: isError true with this text. */
int phantom_result_error(phantom_result *res, const char *message);
/* Prompts: the role of the messages added next ("user" or "assistant") and
 * the description of the result. */
int phantom_result_role(phantom_result *res, const char *role);
int phantom_result_description(phantom_result *res, const char *description);
/* Resources: the uri is not there (-32602 "Resource not found"). */
int phantom_result_not_found(phantom_result *res);
/* Tools and resources: cache hints for the client (ttlMs, cacheScope),
 * as an exec handler's "ttlMs" and "cacheScope" members give them. ttl_ms
 * < 0 or scope NULL: none of that one; scope "public" or "private". The
 * configuration caps them (phantom.yaml(5), EXEC HANDLERS, Cache hints):
 * the smaller TTL wins, and "private" from either side wins (added within
 * PHANTOM_ABI 1: no existing call changed). Returns -1 on a bad value
 * (ttl_ms over 86400000, another scope). */
int phantom_result_cache(phantom_result *res, long long ttl_ms, const char *scope);
/* Completion: one more value; total (< 0: unknown). */
int phantom_result_value(phantom_result *res, const char *value);
int phantom_result_total(phantom_result *res, long long total);


/* Asking the client for input. A result with an input request or a state
 * is an "input required" answer (its content is not sent): the client gets
 * resultType "input_required" with the requests and the state sealed in
 * requestState, and calls again with the answers. Phantom checks each
 * request against the client's declared capabilities: a request the client
 * cannot answer fails the call with -32021, so look at
 * phantom_call_has_capability first when there is a fallback. */
/* One request under key (unique in the result): {"method": ...,
 * "params": {...}} with method elicitation/create, sampling/createMessage
 * or roots/list. Ownership of request is taken. */
int phantom_result_input_request_take(phantom_result *res, const char *key, struct json_object *request);
/* The same from a JSON text. */
int phantom_result_input_request_json(phantom_result *res, const char *key, const char *json);
/* A form elicitation: message and a requestedSchema as JSON text
 * ({"type": "object", "properties": {...}, "required": [...]}). */
int phantom_result_elicit(phantom_result *res, const char *key, const char *message,
			  const char *schema_json);
/* A URL elicitation: the user is asked to open url (never with credentials
 * or personal data in it). */
int phantom_result_elicit_url(phantom_result *res, const char *key, const char *message,
			      const char *url);
/* The state for the next round (any JSON value; ownership taken), sealed
 * for the client and handed back by phantom_call_state. A state without any
 * request asks the client to simply call again. */
int phantom_result_state_take(phantom_result *res, struct json_object *state);
int phantom_result_state_json(phantom_result *res, const char *json);

/* Shorthands: a new result with one text block / one tool error. */
phantom_result *phantom_text(const char *text) PHANTOM_MUST_USE;
phantom_result *phantom_error(const char *message) PHANTOM_MUST_USE;

/* ---- authenticators ----------------------------------------------------- */

/* auth: {mode: module, module: M.so, symbol: S} calls S, a
 * phantom_handler_fn, for every HTTP request before anything else (kind
 * "auth"). Its arguments are the document an exec authenticator reads on
 * stdin ({headers: {name: value}, remote_addr, remote_user, request_uri,
 * method}; headers as auth.headers lists them) and it answers with the
 * same document as structuredContent: {"decision": "allow", "principal":
 * P, "allow": {...}, "assigns": {...}}, {"decision": "unauthorized" |
 * "forbidden", "message": ...}. NULL, or an answer that is not one of
 * these, fails the request (500) with the reason in the server log. The
 * builders below make those answers. Assigns are bounded as an exec
 * authenticator's are (auth.max_assigns, auth.assigns_depth). */
/* A request header of an authenticator call (any case; NULL when absent
 * or not in auth.headers). Borrowed. */
const char *phantom_call_header(const phantom_call *c, const char *name) PHANTOM_NONNULL(1, 2);
/* {"decision": "allow", "principal": principal}. */
phantom_result *phantom_auth_allow(const char *principal) PHANTOM_MUST_USE;
/* status 401 (unauthorized) or 403 (forbidden), with message (may be NULL). */
phantom_result *phantom_auth_deny(int status, const char *message) PHANTOM_MUST_USE;
/* The principal's assigns (an object; ownership taken in every case) next
 * to the principal of a phantom_auth_allow result; -1 when res is not one
 * or assigns is not an object. */
int phantom_result_assigns_take(phantom_result *res, struct json_object *assigns);

/* ---- serving ------------------------------------------------------------ */

/* Builds a server from a configuration file (NULL: built-in defaults) and a
 * registry (may be NULL) whose items are added after the configured ones.
 * Takes ownership of reg in every case. Returns NULL with a message in err. */
phantom_server *phantom_server_new(const char *config_path, phantom_registry *reg, char *err,
				   size_t errsz) PHANTOM_MUST_USE;
void phantom_server_free(phantom_server *srv);
/* Serves newline-delimited JSON-RPC on stdin/stdout until EOF, one request
 * at a time in this process (stdio.concurrency is for phantom-fcgi). */
int phantom_serve_stdio(phantom_server *srv) PHANTOM_NONNULL(1);
/* Serves FastCGI in this process on listen_spec ("HOST:PORT",
 * "unix:PATH"), or on the socket inherited on fd 0 when NULL, until SIGTERM. */
int phantom_serve_fcgi(phantom_server *srv, const char *listen_spec) PHANTOM_NONNULL(1);

#ifdef __cplusplus
}
#endif
#endif
