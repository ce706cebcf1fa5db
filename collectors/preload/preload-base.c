/* preload-base.c - the preload library's wait for its host's handlers
 * and its per-thread count of the collector's own work, the settings
 * (preload.h) */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "host.h"
#include "preload.h"

__thread int preload_own_depth __attribute__((tls_model("initial-exec")));

int preload_quiesce(uint64_t timeout_ns, uint64_t step_ns)
{
	uint64_t deadline = preload_now() + timeout_ns;
	struct timespec step = { (time_t)(step_ns / 1000000000ull), (long)(step_ns % 1000000000ull) };

	while (!preload_host.handlers_idle()) {
		if (preload_now() > deadline)
			return -1;
		nanosleep(&step, NULL);
	}
	return 0;
}

const char *preload_settings;

/* The settings of an attach, one NUL-ended string each, two at the end. */
static char preload_settings_buf[8192];

int preload_settings_take(const char *s)
{
	size_t n = strnlen(s, sizeof(preload_settings_buf));

	if (n + 2 > sizeof(preload_settings_buf))
		return -1;
	memcpy(preload_settings_buf, s, n);
	preload_settings_buf[n] = preload_settings_buf[n + 1] = '\0';
	for (size_t i = 0; i < n; i++)
		if (preload_settings_buf[i] == '\n')
			preload_settings_buf[i] = '\0';
	preload_settings = preload_settings_buf;
	return 0;
}

int preload_attach_fifo(const char *name, int flags)
{
	const char *path = preload_setting(name);

	return path != NULL ? open(path, flags | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC) : -1;
}

const char *preload_setting(const char *name)
{
	size_t len = strlen(name);

	if (preload_settings == NULL)
		return getenv(name);
	for (const char *p = preload_settings; *p != '\0'; p += strlen(p) + 1)
		if (strncmp(p, name, len) == 0 && p[len] == '=')
			return p + len + 1;
	return NULL;
}
