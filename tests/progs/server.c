/* server.c - a stand-in for a long-running service, for the README's
 * recipe and scripts/demo: the main thread takes requests in (here made up,
 * a few hundred a second, in bursts) and queues them; three workers take
 * them off the queue, parse each, look its key up and render a reply.  It
 * runs until SIGTERM or SIGINT, then prints how many requests it served.
 * Some fifteen percent of a CPU's worth of work. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define QUEUE 256
#define REQ_LEN 512
#define WORKERS 3

struct request {
	char body[REQ_LEN];
	uint32_t key;
};

static struct request queue[QUEUE];
static unsigned head, tail;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready = PTHREAD_COND_INITIALIZER;
static volatile sig_atomic_t stopping;
static uint64_t served;
static volatile uint32_t sink;
static uint32_t table[1 << 16];

static void on_stop(int sig)
{
	(void)sig;
	stopping = 1;
}

__attribute__((noinline)) static uint32_t parse_request(const char *body)
{
	uint32_t fields = 0;

	for (int pass = 0; pass < 3000; pass++)
		for (size_t i = 0; i < REQ_LEN; i++)
			fields += body[i] == '&' || body[i] == '=';
	return fields;
}

__attribute__((noinline)) static uint32_t lookup(uint32_t key)
{
	uint32_t h = key * 2654435761u, v = 0;

	for (int probe = 0; probe < 65536; probe++)
		v += table[(h + probe * 31u) & (sizeof table / sizeof table[0] - 1)];
	/* the entry is touched: a hit count */
	__atomic_fetch_add(&table[h & (sizeof table / sizeof table[0] - 1)], 1, __ATOMIC_RELAXED);
	return v;
}

__attribute__((noinline)) static uint32_t render_reply(const char *body, uint32_t v)
{
	uint32_t c = 0xffffffffu ^ v;

	for (int round = 0; round < 40; round++)
		for (size_t i = 0; i < REQ_LEN; i++) {
			c ^= (unsigned char)body[i];
			for (int k = 0; k < 8; k++)
				c = (c >> 1) ^ (0xedb88320u & -(c & 1));
		}
	return ~c;
}

static void *worker(void *arg)
{
	char name[16];
	struct request r;

	snprintf(name, sizeof name, "worker-%d", (int)(intptr_t)arg);
	pthread_setname_np(pthread_self(), name);
	for (;;) {
		pthread_mutex_lock(&lock);
		while (head == tail && !stopping)
			pthread_cond_wait(&ready, &lock);
		if (head == tail) {
			pthread_mutex_unlock(&lock);
			return NULL;
		}
		r = queue[tail++ % QUEUE];
		pthread_mutex_unlock(&lock);
		sink += parse_request(r.body);
		sink += render_reply(r.body, lookup(r.key));
		__atomic_fetch_add(&served, 1, __ATOMIC_RELAXED);
	}
}

/* The next request: a made-up query string. */
__attribute__((noinline)) static void accept_request(struct request *r, uint32_t *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	r->key = *seed;
	for (size_t i = 0; i < REQ_LEN; i++)
		r->body[i] = "abc=def&ghi=jk"[(i + *seed) % 14];
}

int main(void)
{
	pthread_t t[WORKERS];
	struct sigaction sa;
	uint32_t seed = 1;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	for (int i = 0; i < WORKERS; i++)
		pthread_create(&t[i], NULL, worker, (void *)(intptr_t)(i + 1));
	while (!stopping) {
		/* a burst of requests, then a pause of 10 to 30 ms: of random
		 * length, so that the work does not beat with the scheduler
		 * tick (and its CPU timers) */
		struct timespec nap = { 0, 10000000 + (long)(seed >> 8) % 20000000 };

		for (int n = 0; n < 8 && !stopping; n++) {
			pthread_mutex_lock(&lock);
			if (head - tail < QUEUE)
				accept_request(&queue[head++ % QUEUE], &seed);
			pthread_cond_signal(&ready);
			pthread_mutex_unlock(&lock);
		}
		nanosleep(&nap, NULL);
	}
	pthread_mutex_lock(&lock);
	pthread_cond_broadcast(&ready);
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	printf("server: %llu requests served\n", (unsigned long long)served);
	return 0;
}
