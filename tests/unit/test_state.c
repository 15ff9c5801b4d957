/* test_state.c: requestState sealing and opening, every refusal, key
 * rotation, and the configuration checks of request_state. */
#include "first.h"
#include "ph_conf.h"
#include "ph_state.h"
#include "ph_util.h"
#include "tap.h"
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static struct ph_config *
load(const char *yaml, const char *dir, struct ph_conf_problems *p)
{
	return ph_conf_load_buf("t.yaml", dir, yaml, strlen(yaml), p);
}

static void
write_file(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");
	fputs(s, f);
	fclose(f);
}

int
main(void)
{
	char dir[] = "/tmp/phantom-state-XXXXXX", path[256];
	struct ph_conf_problems probs = {0};
	struct ph_config *c, *c2;
	struct json_object *args = json_tokener_parse("{\"path\":\"a.txt\",\"n\":[1,2,{\"z\":1,\"a\":2}]}");
	struct json_object *args_reordered = json_tokener_parse("{\"n\":[1,2,{\"a\":2,\"z\":1}],\"path\":\"a.txt\"}");
	struct json_object *other_args = json_tokener_parse("{\"path\":\"b.txt\"}");
	struct json_object *state = json_tokener_parse("{\"step\":2,\"asked\":\"confirm\"}"), *got;
	char *tok, *tampered;
	int64_t now = 1900000000;

	if (sodium_init() < 0 || mkdtemp(dir) == NULL)
		return 1;
	snprintf(path, sizeof path, "%s/secret", dir);
	write_file(path, "0123456789abcdef0123456789abcdef-current\n");
	snprintf(path, sizeof path, "%s/old", dir);
	write_file(path, "0123456789abcdef0123456789abcdef-previous\n");
	snprintf(path, sizeof path, "%s/weak", dir);
	write_file(path, "short\n");

	c = load("request_state: {secret_file: secret, salt: s1, max_age: 60}\n", dir, &probs);
	ok(c != NULL && probs.n == 0, "a 32-byte secret file is accepted");
	if (c == NULL)
		return tap_done();
	ok(!c->request_state->ephemeral, "the key comes from the secret");

	tok = ph_state_seal(c->request_state, "ada", "tools/call", "delete_file", args, state, now);
	ok(strspn(tok, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") == strlen(tok),
	   "the sealed state is base64url");
	ok(strstr(tok, "confirm") == NULL, "the state is not readable in the token");
	is_int(ph_state_open(c->request_state, tok, "ada", "tools/call", "delete_file", args, &got, now + 1),
	       PH_STATE_OK, "it opens with the same binding");
	is_str(got ? json_object_to_json_string_ext(got, JSON_C_TO_STRING_PLAIN) : NULL,
	       "{\"step\":2,\"asked\":\"confirm\"}", "the handler's state comes back");
	json_object_put(got);
	is_int(ph_state_open(c->request_state, tok, "ada", "tools/call", "delete_file", args_reordered,
			     &got, now), PH_STATE_OK, "argument key order does not matter");
	json_object_put(got);
	is_int(ph_state_open(c->request_state, tok, "ada", "tools/call", "delete_file", args, &got,
			     now + 61), PH_STATE_EXPIRED, "expired after max_age");
	is_int(ph_state_open(c->request_state, tok, "bob", "tools/call", "delete_file", args, &got, now),
	       PH_STATE_PRINCIPAL, "another principal is refused");
	is_int(ph_state_open(c->request_state, tok, NULL, "tools/call", "delete_file", args, &got, now),
	       PH_STATE_PRINCIPAL, "no principal is refused when one was bound");
	is_int(ph_state_open(c->request_state, tok, "ada", "prompts/get", "delete_file", args, &got, now),
	       PH_STATE_METHOD, "another method is refused");
	is_int(ph_state_open(c->request_state, tok, "ada", "tools/call", "rm_rf", args, &got, now),
	       PH_STATE_TARGET, "another target is refused");
	is_int(ph_state_open(c->request_state, tok, "ada", "tools/call", "delete_file", other_args, &got,
			     now), PH_STATE_ARGUMENTS, "other arguments are refused");
	tampered = strdup(tok);
	tampered[strlen(tampered) / 2] = tampered[strlen(tampered) / 2] == 'A' ? 'B' : 'A';
	is_int(ph_state_open(c->request_state, tampered, "ada", "tools/call", "delete_file", args, &got,
			     now), PH_STATE_INVALID, "a tampered state is refused");
	tampered[strlen(tok) - 10] = '\0';
	is_int(ph_state_open(c->request_state, tampered, "ada", "tools/call", "delete_file", args, &got,
			     now), PH_STATE_INVALID, "a truncated state is refused");
	free(tampered);
	is_int(ph_state_open(c->request_state, "not base64 at all!", "ada", "tools/call", "delete_file",
			     args, &got, now), PH_STATE_INVALID, "garbage is refused");
	is_int(ph_state_open(c->request_state, "", "ada", "tools/call", "delete_file", args, &got, now),
	       PH_STATE_INVALID, "an empty state is refused");
	ok(strstr(ph_state_message(PH_STATE_INVALID), "altered") != NULL &&
	   strstr(ph_state_message(PH_STATE_EXPIRED), "expired") != NULL,
	   "messages say which check failed");

	/* rotation: the new secret seals, the old one still opens */
	c2 = load("request_state: {secret_file: old, salt: s1}\n", dir, &probs);
	{
		char *old_tok = ph_state_seal(c2->request_state, NULL, "resources/read", "file:///x", NULL,
					      state, now);
		struct ph_config *c3 = load("request_state: {secret_file: secret, salt: s1, "
					    "previous_secret_files: [old]}\n", dir, &probs);
		is_int(ph_state_open(c->request_state, old_tok, NULL, "resources/read", "file:///x", NULL,
				     &got, now), PH_STATE_INVALID, "without rotation an old key's state fails");
		is_int(ph_state_open(c3->request_state, old_tok, NULL, "resources/read", "file:///x", NULL,
				     &got, now), PH_STATE_OK, "a previous secret opens what it sealed");
		json_object_put(got);
		free(old_tok);
		old_tok = ph_state_seal(c3->request_state, NULL, "resources/read", "file:///x", NULL, state,
					now);
		is_int(ph_state_open(c2->request_state, old_tok, NULL, "resources/read", "file:///x", NULL,
				     &got, now), PH_STATE_INVALID, "previous secrets never seal");
		free(old_tok);
		ph_conf_free(c3);
	}
	{
		struct ph_config *c4 = load("request_state: {secret_file: secret, salt: other}\n", dir, &probs);
		is_int(ph_state_open(c4->request_state, tok, "ada", "tools/call", "delete_file", args, &got,
				     now), PH_STATE_INVALID, "another salt derives another key");
		ph_conf_free(c4);
	}

	ph_conf_free(c2);
	ph_conf_problems_free(&probs);
	ok(load("request_state: {secret_file: weak}\n", dir, &probs) == NULL && probs.n == 1 &&
	   strstr(probs.v[0], "t.yaml:1: request_state:") && strstr(probs.v[0], "at least 32"),
	   "a weak secret is refused with file and line: %s", probs.n ? probs.v[0] : "");
	ph_conf_problems_free(&probs);
	ok(load("request_state: {secret_file: missing}\n", dir, &probs) == NULL && probs.n == 1,
	   "an unreadable secret file is a problem");
	ph_conf_problems_free(&probs);
	setenv("PH_TEST_SECRET", "0123456789abcdef0123456789abcdef-current", 1);
	c2 = load("request_state:\n  secret_env: PH_TEST_SECRET\n  salt: s1\n", dir, &probs);
	ok(c2 != NULL, "a secret from the environment is accepted");
	if (c2) {
		is_int(ph_state_open(c2->request_state, tok, "ada", "tools/call", "delete_file", args, &got,
				     now), PH_STATE_OK, "the same secret and salt open on another 'host'");
		json_object_put(got);
		ph_conf_free(c2);
	}
	ph_conf_problems_free(&probs);
	ok(load("request_state: {secret_env: PH_TEST_UNSET_VARIABLE}\n", dir, &probs) == NULL,
	   "an unset environment variable is a problem");
	ph_conf_problems_free(&probs);
	ok(load("request_state: {secret_file: secret, secret_env: PH_TEST_SECRET}\n", dir, &probs) == NULL,
	   "file and env together are refused");
	ph_conf_problems_free(&probs);
	ok(load("request_state: {bogus: 1}\n", dir, &probs) == NULL && strstr(probs.v[0], "request_state.bogus"),
	   "unknown keys are named");
	ph_conf_problems_free(&probs);
	ok(load("request_state: {max_age: 0}\n", dir, &probs) == NULL, "max_age 0 is out of range");
	ph_conf_problems_free(&probs);
	/* documents sealed for another purpose (legacy session ids) */
	{
		struct json_object *doc = json_tokener_parse("{\"sid\":\"ab\",\"exp\":5}"), *back;
		char *st = ph_state_seal_doc(c->request_state, "session", doc), *cut;
		back = ph_state_open_doc(c->request_state, "session", st, 16384);
		is_str(back ? json_object_to_json_string_ext(back, JSON_C_TO_STRING_PLAIN) : NULL,
		       "{\"sid\":\"ab\",\"exp\":5}", "a sealed document opens for its purpose");
		json_object_put(back);
		ok(ph_state_open_doc(c->request_state, "other", st, 16384) == NULL,
		   "it does not open for another purpose");
		ok(ph_state_open_doc(c->request_state, "session", st, strlen(st) - 1) == NULL,
		   "a token over max_len is refused");
		cut = ph_xstrndup(st, strlen(st) - 2);
		ok(ph_state_open_doc(c->request_state, "session", cut, 16384) == NULL, "a truncated one is refused");
		free(cut);
		ok(ph_state_open_doc(c->request_state, "session", tok, 16384) == NULL,
		   "a requestState does not open as a session document");
		is_int(ph_state_open(c->request_state, st, "ada", "tools/call", "delete_file", args, &got, now),
		       PH_STATE_INVALID, "a session document does not open as a requestState");
		ok(ph_state_open_doc(c->request_state, "session", "!!not base64!!", 16384) == NULL,
		   "garbage is refused");
		free(st);
		json_object_put(doc);
	}
	c2 = load("server: {name: x}\n", dir, &probs);
	ok(c2 != NULL && c2->request_state == NULL, "no section: nothing parsed");
	ph_state_conf_default(c2);
	ok(c2->request_state && c2->request_state->ephemeral, "the default is an ephemeral key");
	ph_conf_free(c2);

	free(tok);
	ph_conf_free(c);
	json_object_put(args);
	json_object_put(args_reordered);
	json_object_put(other_args);
	json_object_put(state);
	snprintf(path, sizeof path, "rm -rf %s", dir);
	if (system(path) != 0)
		return 1;
	return tap_done();
}
