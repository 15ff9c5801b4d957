/* ph_notify.c: phantom-fcgi --notify, the client of the hub's control
 * socket (process/ph_hub_ctl.c): an application outside the server
 * announces a list change or a resource update. */
#include "first.h"
#include "ph_notify.h"
#include "ph_hub_ctl.h"
#include "ph_util.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* Sends one command line (with its newline) to the hub at sa and adds the
 * streams it told to *told. Returns 0, or 1 after printing why. */
static int
notify_line(const struct sockaddr_un *sa, const char *path, const char *line, size_t len, long *told)
{
	char reply[256];
	ssize_t n;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (const struct sockaddr *)sa, sizeof *sa) != 0) {
		fprintf(stderr, "phantom-fcgi: cannot reach the hub at %s: %s (is a master running?)\n",
			path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	n = ph_write_all(fd, line, len) != 0 ? -1 : read(fd, reply, sizeof reply - 1);
	close(fd);
	if (n <= 0) {
		fprintf(stderr, "phantom-fcgi: the hub did not answer\n");
		return 1;
	}
	reply[n] = '\0';
	if (strncmp(reply, "ok ", 3) != 0) {
		fputs(reply, stderr);
		return 1;
	}
	*told += strtol(reply + 3, NULL, 10);
	return 0;
}

int
ph_hub_notify(const char *path, int argc, char **argv)
{
	static const char upd[] = "resources/updated";
	struct sockaddr_un sa;
	struct ph_buf cmd;
	long told = 0;
	int rc = 0;
	bool updated_uris = argc >= 1 && strcmp(argv[0], upd) == 0;
	if (updated_uris ? argc < 2 : argc != 1) {
		fprintf(stderr, "phantom-fcgi: --notify takes one notification: tools/list_changed, "
			"prompts/list_changed, resources/list_changed, or resources/updated and its URIs\n");
		return 2;
	}
	if (path == NULL || *path == '\0' || !ph_hub_ctl_addr(path, &sa)) {
		fprintf(stderr, "phantom-fcgi: no subscriptions.control_socket is configured\n");
		return 1;
	}
	for (int i = 1; i < argc; i++) {
		if (strpbrk(argv[i], " \t\r\n") != NULL || argv[i][0] == '\0' ||
		    sizeof upd + strlen(argv[i]) + 1 >= PH_HUB_CTL_LINE_MAX) {
			fprintf(stderr, "phantom-fcgi: not a URI of at most %zu bytes: '%.200s'\n",
				PH_HUB_CTL_LINE_MAX - sizeof upd - 2, argv[i]);
			return 2;
		}
	}
	/* any number of URIs: as many command lines as they need, each within
	 * the control socket's PH_HUB_CTL_LINE_MAX */
	ph_buf_init(&cmd);
	ph_buf_adds(&cmd, argv[0]);
	for (int i = 1; i < argc && rc == 0; i++) {
		ph_buf_printf(&cmd, " %s", argv[i]);
		if (i + 1 < argc && cmd.len + 2 + strlen(argv[i + 1]) < PH_HUB_CTL_LINE_MAX)
			continue;
		ph_buf_addc(&cmd, '\n');
		rc = notify_line(&sa, path, cmd.data, cmd.len, &told);
		cmd.len = 0;
		ph_buf_adds(&cmd, upd);
	}
	if (argc == 1) {
		ph_buf_addc(&cmd, '\n');
		rc = notify_line(&sa, path, cmd.data, cmd.len, &told);
	}
	ph_buf_free(&cmd);
	if (rc == 0)
		printf("ok %ld\n", told);
	return rc;
}
