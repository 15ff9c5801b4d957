/* ph_front.h: the fronts (FastCGI, CGI, stdio), the prefork master and the
 * listening socket. None of them knows MCP; they hand exchanges to ph_serve. */
#ifndef PH_FRONT_H
#define PH_FRONT_H
#include "first.h"
#include "ph_build.h"
#include "ph_core.h"
#include "ph_shared.h"
#include <signal.h>

struct ph_run {
	const char *conf_path;   /* for reloads; NULL = built-in defaults */
	int listen_fd;           /* FastCGI listening socket */
	long long workers;       /* 0/1: single process, no master */
	long long max_requests;  /* per worker, 0 = unlimited */
	long long shutdown_timeout; /* seconds */
};


/* Serves FastCGI on r->listen_fd until stopped or max_requests is reached.
 * own_reload: handle SIGHUP in this process (single-process mode).
 * *srv may be replaced by a reload. Returns the process exit status. */
int ph_fcgi_serve(struct ph_server **srv, const struct ph_run *r, bool own_reload);
/* Reads PHANTOM_FCGI_READER: "split", simple requests waiting whole are
 * split out of the connection by Phantom's own reader; "libfcgi", libfcgi
 * reads every request (the path the split declines, forced so tests cover
 * it whole), said in the log when say; unset or empty, the split as long
 * as ph_fast_paths is on (read it first: PHANTOM_FAST_PATHS=off turns the
 * split off with the other fast paths). false with a message in err for
 * any other value. ph_fcgi_serve reads it itself. */
bool ph_fcgi_reader(bool say, char *err, size_t errsz);
/* Serves one CGI request from the environment and stdin. Returns exit status. */
int ph_cgi_once(struct ph_server *srv);
/* Sets up a process that serves requests itself, without a master (CGI,
 * stdio): SIGPIPE ignored (a client gone is a write error, not our end),
 * and this process the subreaper of what its handlers leave behind, even
 * after setsid, so that it can sweep them. */
void ph_front_alone(void);
struct ph_buf;
/* Appends to b the head of a CGI response (a FastCGI responder's too):
 * the Status line, Content-Type unless ctype is NULL, and hdrs (ending with
 * {NULL, NULL}, or NULL), without the blank line that ends it. */
void ph_cgi_head(struct ph_buf *b, int status, const char *ctype, const struct ph_header *hdrs);
/* The head of a complete response of len bytes: ph_cgi_head,
 * Content-Length and the blank line. */
void ph_cgi_response_head(struct ph_buf *b, int status, const char *ctype, const struct ph_header *hdrs,
			  size_t len);
/* Serves newline-delimited JSON-RPC on stdin/stdout until EOF. reload:
 * SIGHUP loads conf_path (NULL: the built-in defaults) again, replacing
 * *srv, and tells the listens the client holds what changed. children:
 * calls run in processes of their own, stdio.concurrency at once (off: one
 * request at a time in this process, as a program embedding libphantom
 * wants it). */
int ph_stdio_run(struct ph_server **srv, const char *conf_path, bool reload, bool children);
/* The prefork master: forks r->workers workers, supervises, reloads, stops. */
int ph_master_run(struct ph_server *srv, const struct ph_run *r);

/* Opens a listening socket for "HOST:PORT", "[V6]:PORT" or "unix:PATH";
 * a unix socket gets the mode, owner and group perm asks for (borrowed; NULL
 * or a TCP spec: none). Returns the fd or -1 with the reason in errbuf. */
struct ph_listen_perm;
int ph_listen_open(const char *spec, const struct ph_listen_perm *perm, char *errbuf, size_t errsz);
/* The first socket that systemd passes (SD_LISTEN_FDS_START). */
#define PH_LISTEN_FDS_START 3
/* systemd socket activation without libsystemd: when LISTEN_PID is this
 * process and LISTEN_FDS is 1, returns the listening socket on fd 3 (made
 * close-on-exec). Returns -1 when no socket was passed to this process, -2
 * with a message in errbuf when the passed sockets cannot be served (more
 * than one, or fd 3 not a listening stream socket). Always unsets
 * LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES, so children never see them. */
int ph_listen_activated(char *errbuf, size_t errsz);
/* True when fd is a listening socket (the FastCGI convention for fd 0). */
bool ph_fd_is_listener(int fd);
/* True when fd is any socket. */
bool ph_fd_is_socket(int fd);

/* Signal helpers shared by the worker and single-process loops. */
void ph_signals_worker_init(void);
#endif
