/* preload-base.c - the preload library's wait for its host's handlers
 * and its per-thread count of the collector's own work, the settings
 * (preload.h) */
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
