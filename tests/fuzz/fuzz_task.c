/* fuzz_task.c: libFuzzer harness for the task store (src/ipc/ph_task.c):
 * the input is a task record as a file in the store and, as a string, a
 * task id. Whatever it holds, loading, viewing, ownership, expiry and a
 * status change followed by a save and a reload must not crash or leak,
 * and a record that loads must come back with the same id after the round
 * trip. */
#include "first.h"
#include "ph_json.h"
#include "ph_task.h"
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ID "0123456789abcdef0123456789abcdef"

static char dir[64];

/* The scratch store goes when the fuzzer exits. */
static void
cleanup(void)
{
	char path[128];
	snprintf(path, sizeof path, "%s/%s.json", dir, ID);
	unlink(path);
	snprintf(path, sizeof path, "%s/.lock", dir);
	unlink(path);
	rmdir(dir);
}

static void
as_id(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), host[40];
	memcpy(s, data, size);
	s[size] = '\0';
	if (ph_task_id_ok(s)) {
		ph_task_id_host(s, host, sizeof host);
		if (strlen(host) > 32)
			abort(); /* a valid id names a host of at most 32 characters */
	}
	json_object_put(ph_task_load(dir, s)); /* never a path outside dir */
	free(s);
}

static void
as_record(const uint8_t *data, size_t size)
{
	char path[128];
	struct json_object *rec, *v, *again;
	int fd;
	snprintf(path, sizeof path, "%s/%s.json", dir, ID);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);
	if ((rec = ph_task_load(dir, ID)) == NULL)
		return;
	v = ph_task_view(rec);
	(void)ph_task_owned(rec, "ada");
	(void)ph_task_owned(rec, NULL);
	(void)ph_task_ended_ms(rec);
	(void)ph_task_status_final(ph_jstr(rec, "status"));
	json_object_object_add(rec, "taskId", json_object_new_string(ID));
	ph_task_set_status(rec, "failed", "fuzz");
	if (ph_task_save(dir, rec) != 0)
		abort();
	again = ph_task_load(dir, ID);
	if (again == NULL || strcmp(ph_jstr(again, "taskId"), ID) != 0 ||
	    !ph_task_status_final(ph_jstr(again, "status")))
		abort();
	json_object_put(again);
	json_object_put(v);
	json_object_put(rec);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (dir[0] == '\0') {
		if (sodium_init() < 0)
			abort();
		snprintf(dir, sizeof dir, "/tmp/fuzz-task-%d", (int)getpid());
		const char *why;
		if (ph_task_dir_ready(dir, &why) != 0)
			abort();
		atexit(cleanup);
	}
	as_id(data, size);
	as_record(data, size);
	return 0;
}
