/* ph_stdio.c: the stdio front. One JSON-RPC message per line on stdin, one
 * per line on stdout, logs only on stderr, exit on EOF. */
#include "first.h"
#include "ph_front.h"
#include "ph_util.h"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *
stdio_param(struct ph_exchange *ex, const char *name)
{
	(void)ex;
	(void)name;
	return NULL;
}

static long
stdio_read(struct ph_exchange *ex, char *buf, size_t len)
{
	(void)ex;
	(void)buf;
	(void)len;
	return 0;
}

static int
put_line(const char *s, size_t len)
{
	if (fwrite(s, 1, len, stdout) != len || fputc('\n', stdout) == EOF || fflush(stdout) != 0)
		return -1;
	return 0;
}

static int
stdio_respond(struct ph_exchange *ex, int status, const char *ctype, const struct ph_header *hdrs,
	      const char *body, size_t len)
{
	(void)ex;
	(void)status;
	(void)ctype;
	(void)hdrs;
	if (body == NULL || len == 0)
		return 0; /* notifications get no answer */
	return put_line(body, len);
}

static int
stdio_stream_start(struct ph_exchange *ex, const struct ph_header *hdrs)
{
	(void)ex;
	(void)hdrs;
	return 0;
}

static int
stdio_stream_send(struct ph_exchange *ex, const char *json, size_t len)
{
	(void)ex;
	return put_line(json, len);
}

static int
stdio_stream_ping(struct ph_exchange *ex)
{
	(void)ex;
	return 0;
}

static const struct ph_front_ops stdio_ops = {
	stdio_param, stdio_read, stdio_respond, stdio_stream_start, stdio_stream_send,
	stdio_stream_ping,
};

int
ph_stdio_run(struct ph_server *srv)
{
	char *line = NULL;
	size_t cap = 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	for (;;) {
		ssize_t n;
		struct ph_exchange ex;
		errno = 0;
		n = getline(&line, &cap, stdin);
		if (n < 0) {
			if (errno == EINTR && !ferror(stdin))
				continue;
			break; /* EOF: the client is done */
		}
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (n == 0)
			continue;
		memset(&ex, 0, sizeof ex);
		ex.ops = &stdio_ops;
		ex.http = false;
		ex.body = line;
		ex.body_len = (size_t)n;
		ex.too_large = (long long)n > srv->conf->http.max_body;
		ph_serve(srv, &ex);
		if (ferror(stdout))
			break;
		/* a line far over the limit should not keep its memory */
		if (cap > (size_t)srv->conf->http.max_body * 2) {
			free(line);
			line = NULL;
			cap = 0;
		}
	}
	free(line);
	return 0;
}
