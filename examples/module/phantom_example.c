/* phantom_example.c: the example module of conf/phantom.yaml. Each handler
 * is a function with the phantom_handler_fn signature of phantom.h; the
 * configuration names it with `module: phantom_example.so` and `symbol:`.
 *
 *   echo            returns its text argument
 *   text_stats      characters, words and lines of a text (structured)
 *   count_to        counts with progress notifications, honours cancellation
 *   complete_language   completion for a "language" prompt argument
 *   rot13           a resource template handler: example://rot13/{text}
 */
#include <phantom.h>
#include <json-c/json.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

PHANTOM_MODULE();

phantom_result *echo(phantom_call *c, void *udata);
phantom_result *text_stats(phantom_call *c, void *udata);
phantom_result *count_to(phantom_call *c, void *udata);
phantom_result *complete_language(phantom_call *c, void *udata);
phantom_result *rot13(phantom_call *c, void *udata);

phantom_result *
echo(phantom_call *c, void *udata)
{
	(void)udata;
	return phantom_text(phantom_arg_string(c, "text", ""));
}

phantom_result *
text_stats(phantom_call *c, void *udata)
{
	const char *t = phantom_arg_string(c, "text", "");
	long chars = 0, words = 0, lines = 0;
	int in_word = 0;
	char summary[160];
	struct json_object *sc = json_object_new_object();
	phantom_result *res = phantom_result_new();
	(void)udata;
	for (const unsigned char *p = (const unsigned char *)t; *p; p++) {
		if ((*p & 0xc0) != 0x80)
			chars++; /* UTF-8 characters, not bytes */
		if (*p == '\n')
			lines++;
		if (isspace(*p)) {
			in_word = 0;
		} else if (!in_word) {
			in_word = 1;
			words++;
		}
	}
	if (*t && t[strlen(t) - 1] != '\n')
		lines++;
	snprintf(summary, sizeof summary, "%ld character%s, %ld word%s, %ld line%s", chars, chars == 1 ? "" : "s",
		 words, words == 1 ? "" : "s", lines, lines == 1 ? "" : "s");
	json_object_object_add(sc, "characters", json_object_new_int64(chars));
	json_object_object_add(sc, "words", json_object_new_int64(words));
	json_object_object_add(sc, "lines", json_object_new_int64(lines));
	phantom_result_text(res, summary);
	phantom_result_structured_take(res, sc);
	return res;
}

phantom_result *
count_to(phantom_call *c, void *udata)
{
	long long n = phantom_arg_int(c, "n", 3), delay = phantom_arg_int(c, "delay_ms", 100);
	char msg[64];
	(void)udata;
	for (long long i = 1; i <= n; i++) {
		struct timespec ts = {(time_t)(delay / 1000), (long)(delay % 1000) * 1000000L};
		nanosleep(&ts, NULL);
		snprintf(msg, sizeof msg, "counted %lld of %lld", i, n);
		/* -1 means the client went away: stop and return nothing */
		if (phantom_progress(c, (double)i, (double)n, msg) != 0 || phantom_call_cancelled(c))
			return NULL;
		phantom_log(c, "debug", "step %lld", i);
	}
	snprintf(msg, sizeof msg, "counted to %lld", n);
	return phantom_text(msg);
}

phantom_result *
complete_language(phantom_call *c, void *udata)
{
	static const char *const langs[] = {"c", "c++", "elixir", "go", "haskell", "java", "javascript",
					    "perl", "php", "python", "ruby", "rust", "shell", "typescript"};
	const char *prefix = phantom_complete_value(c);
	phantom_result *res = phantom_result_new();
	long long total = 0;
	(void)udata;
	for (size_t i = 0; i < sizeof langs / sizeof langs[0]; i++) {
		if (strncasecmp(langs[i], prefix ? prefix : "", strlen(prefix ? prefix : "")) == 0) {
			phantom_result_value(res, langs[i]);
			total++;
		}
	}
	phantom_result_total(res, total);
	return res;
}

phantom_result *
rot13(phantom_call *c, void *udata)
{
	const char *in = phantom_arg_string(c, "text", NULL);
	char out[1024];
	size_t i;
	phantom_result *res;
	(void)udata;
	if (in == NULL)
		return NULL;
	for (i = 0; in[i] && i < sizeof out - 1; i++) {
		char ch = in[i];
		if (ch >= 'a' && ch <= 'z')
			ch = (char)('a' + (ch - 'a' + 13) % 26);
		else if (ch >= 'A' && ch <= 'Z')
			ch = (char)('A' + (ch - 'A' + 13) % 26);
		out[i] = ch;
	}
	out[i] = '\0';
	res = phantom_result_new();
	phantom_result_text(res, out); /* becomes {uri, mimeType, text} */
	return res;
}
