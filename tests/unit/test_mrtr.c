/* test_mrtr.c: the checks of ph_mrtr.c that need no request: which input
 * requests are well formed, which client capabilities each needs and how a
 * missing one is named in data.requiredCapabilities, and the elicitationId
 * of a 2025-11-25 URL elicitation. (The request paths are in
 * tests/integration/elicit.sh.) */
#include "first.h"
#include "ph_mrtr.c" /* its static functions */
#include "tap.h"

static const char *
why(const char *req_json, struct need *need)
{
	struct json_object *req = json_tokener_parse(req_json);
	const char *w = check_request(req, need);
	json_object_put(req);
	return w;
}

/* requiredCapabilities for the requests in reqs (a JSON object) against caps
 * (JSON, or NULL), as compact JSON ("" when nothing is missing). */
static char out[512];
static const char *
required(const char *caps_json, const char *reqs_json)
{
	struct json_object *caps = caps_json ? json_tokener_parse(caps_json) : NULL;
	struct json_object *reqs = json_tokener_parse(reqs_json), *miss;
	struct need need = {false, false, false, false};
	json_object_object_foreach(reqs, k, v) {
		(void)k;
		if (check_request(v, &need) != NULL)
			return "(bad request)";
	}
	miss = missing_caps(caps, &need);
	snprintf(out, sizeof out, "%s", miss ? json_object_to_json_string_ext(miss, JSON_C_TO_STRING_PLAIN) : "");
	json_object_put(miss);
	json_object_put(caps);
	json_object_put(reqs);
	return out;
}

#define FORM "{\"f\":{\"method\":\"elicitation/create\",\"params\":{\"message\":\"m\",\"requestedSchema\":{\"type\":\"object\"}}}}"
#define URL "{\"u\":{\"method\":\"elicitation/create\",\"params\":{\"mode\":\"url\",\"message\":\"m\",\"url\":\"https://x\"}}}"
#define SAMPLE "{\"s\":{\"method\":\"sampling/createMessage\",\"params\":{\"messages\":[],\"maxTokens\":5}}}"
#define ROOTS "{\"r\":{\"method\":\"roots/list\"}}"
#define ALL "{\"f\":{\"method\":\"elicitation/create\",\"params\":{\"message\":\"m\",\"requestedSchema\":{}}}," \
	"\"u\":{\"method\":\"elicitation/create\",\"params\":{\"mode\":\"url\",\"message\":\"m\",\"url\":\"u\"}}," \
	"\"s\":{\"method\":\"sampling/createMessage\",\"params\":{\"messages\":[],\"maxTokens\":1}}," \
	"\"r\":{\"method\":\"roots/list\",\"params\":{}}}"

int
main(void)
{
	struct need n = {false, false, false, false};
	char id[37], id2[37];

	/* well-formed requests, and what each needs */
	ok(why("{\"method\":\"elicitation/create\",\"params\":{\"message\":\"m\",\"requestedSchema\":{}}}", &n) == NULL &&
	   n.form && !n.url, "a form elicitation (mode left out) needs form mode");
	memset(&n, 0, sizeof n);
	ok(why("{\"method\":\"elicitation/create\",\"params\":{\"mode\":\"url\",\"message\":\"m\",\"url\":\"u\"}}", &n) == NULL &&
	   n.url && !n.form, "a URL elicitation needs URL mode");
	memset(&n, 0, sizeof n);
	ok(why("{\"method\":\"sampling/createMessage\",\"params\":{\"messages\":[],\"maxTokens\":1}}", &n) == NULL &&
	   n.sampling, "sampling");
	memset(&n, 0, sizeof n);
	ok(why("{\"method\":\"roots/list\"}", &n) == NULL && n.roots, "roots/list without params");
	ok(why("{\"method\":\"roots/list\",\"params\":{}}", &n) == NULL, "roots/list with empty params");

	/* malformed requests: each has its reason */
	is_str(why("[]", &n), "is not an object {method, params}", "not an object");
	is_str(why("{\"params\":{}}", &n), "has no method", "no method");
	is_str(why("{\"method\":\"roots/list\",\"params\":[]}", &n), "has params that are not an object",
	       "params not an object");
	is_str(why("{\"method\":\"tools/call\",\"params\":{}}", &n),
	       "asks for a method other than elicitation/create, sampling/createMessage or roots/list",
	       "a method a client does not serve");
	is_str(why("{\"method\":\"elicitation/create\"}", &n), "is an elicitation without a message",
	       "elicitation without params");
	is_str(why("{\"method\":\"elicitation/create\",\"params\":{\"message\":1}}", &n),
	       "is an elicitation without a message", "elicitation with a message that is not a string");
	is_str(why("{\"method\":\"elicitation/create\",\"params\":{\"message\":\"m\",\"mode\":3}}", &n),
	       "has a mode that is not a string", "mode not a string");
	is_str(why("{\"method\":\"elicitation/create\",\"params\":{\"message\":\"m\",\"mode\":\"popup\"}}", &n),
	       "has a mode other than form or url", "an unknown mode");
	is_str(why("{\"method\":\"elicitation/create\",\"params\":{\"message\":\"m\"}}", &n),
	       "is a form elicitation without a requestedSchema object", "form without a schema");
	is_str(why("{\"method\":\"elicitation/create\",\"params\":{\"message\":\"m\",\"mode\":\"url\"}}", &n),
	       "is a URL elicitation without a url", "URL mode without a url");
	is_str(why("{\"method\":\"sampling/createMessage\",\"params\":{\"messages\":[],\"maxTokens\":1.5}}", &n),
	       "is a sampling request without messages and an integer maxTokens", "sampling with a fractional maxTokens");
	is_str(why("{\"method\":\"sampling/createMessage\",\"params\":{\"maxTokens\":1}}", &n),
	       "is a sampling request without messages and an integer maxTokens", "sampling without messages");

	/* capabilities: what is missing, as data.requiredCapabilities */
	is_str(required("{\"elicitation\":{}}", FORM), "", "form with elicitation {}");
	is_str(required("{\"elicitation\":{\"form\":{}}}", FORM), "", "form with elicitation.form");
	is_str(required("{\"elicitation\":{\"form\":{},\"url\":{}}}", FORM), "", "form with both modes");
	is_str(required("{}", FORM), "{\"elicitation\":{}}", "form without elicitation");
	is_str(required(NULL, FORM), "{\"elicitation\":{}}", "form without any declaration (legacy)");
	is_str(required("{\"elicitation\":true}", FORM), "{\"elicitation\":{}}", "elicitation must be an object");
	is_str(required("{\"elicitation\":{\"url\":{}}}", FORM), "{\"elicitation\":{\"form\":{}}}",
	       "form with URL mode only declared");
	is_str(required("{\"elicitation\":{\"url\":{}}}", URL), "", "URL mode declared");
	is_str(required("{\"elicitation\":{}}", URL), "{\"elicitation\":{\"url\":{}}}", "URL with elicitation {}");
	is_str(required("{}", URL), "{\"elicitation\":{\"url\":{}}}", "URL without elicitation");
	is_str(required("{\"sampling\":{}}", SAMPLE), "", "sampling declared");
	is_str(required("{\"roots\":{}}", SAMPLE), "{\"sampling\":{}}", "sampling undeclared");
	is_str(required("{\"roots\":{\"listChanged\":true}}", ROOTS), "", "roots declared with members");
	is_str(required("{\"sampling\":{}}", ROOTS), "{\"roots\":{}}", "roots undeclared");
	is_str(required("{}", ALL), "{\"elicitation\":{\"form\":{},\"url\":{}},\"sampling\":{},\"roots\":{}}",
	       "everything undeclared: both modes named");
	is_str(required("{\"elicitation\":{},\"sampling\":{},\"roots\":{}}", ALL), "{\"elicitation\":{\"url\":{}}}",
	       "only URL mode missing");
	is_str(required("{\"elicitation\":{\"form\":{},\"url\":{}},\"sampling\":{},\"roots\":{}}", ALL), "",
	       "everything declared");
	{
		struct json_object *m = json_tokener_parse("{\"elicitation\":{\"url\":{}},\"sampling\":{}}");
		char *s = cap_names(m);
		is_str(s, "elicitation (URL mode), sampling", "the names in the -32021 message");
		free(s);
		json_object_put(m);
	}

	/* elicitationId of a 2025-11-25 URL elicitation: a version 4 UUID */
	ph_uuid4(id);
	ph_uuid4(id2);
	ok(strlen(id) == 36 && id[8] == '-' && id[13] == '-' && id[14] == '4' && id[18] == '-' &&
	   strchr("89ab", id[19]) != NULL && id[23] == '-', "a version 4 UUID: %s", id);
	ok(strcmp(id, id2) != 0, "random each time");
	return tap_done();
}
