/* demo.c - the program scripts/demo profiles: a main thread that builds an
 * index while two worker threads parse and checksum records. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define RECORD_LEN 256

static volatile uint32_t sink;

static double thread_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static uint32_t parse_record(const char *rec, size_t len)
{
	uint32_t fields = 0;
	for (int pass = 0; pass < 64; pass++)
		for (size_t i = 0; i < len; i++)
			fields += rec[i] == ',' || rec[i] == ';';
	return fields;
}

__attribute__((noinline)) static uint32_t checksum(const char *rec, size_t len)
{
	uint32_t c = 0xffffffffu;
	for (size_t i = 0; i < len; i++) {
		c ^= (unsigned char)rec[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & -(c & 1));
	}
	return ~c;
}

__attribute__((noinline)) static void process_batch(char *rec, int n)
{
	for (int i = 0; i < n; i++) {
		rec[i % RECORD_LEN] = (char)('a' + i % 26);
		sink += parse_record(rec, RECORD_LEN);
		sink += checksum(rec, RECORD_LEN);
	}
}

static void *worker(void *arg)
{
	char name[16], rec[RECORD_LEN];
	snprintf(name, sizeof name, "worker-%d", (int)(intptr_t)arg);
	pthread_setname_np(pthread_self(), name);
	for (size_t i = 0; i < sizeof rec; i++)
		rec[i] = i % 7 ? 'x' : ',';
	while (thread_cpu() < 0.8)
		process_batch(rec, 100);
	return NULL;
}

__attribute__((noinline)) static void insert_key(uint32_t *table, uint32_t key)
{
	uint32_t h = key * 2654435761u;
	for (int probe = 0; probe < 64; probe++)
		table[(h + probe) & 4095] += key;
}

__attribute__((noinline)) static void build_index(void)
{
	static uint32_t table[4096];
	uint32_t key = 1;
	while (thread_cpu() < 0.4)
		for (int i = 0; i < 1000; i++)
			insert_key(table, key = key * 1103515245u + 12345u);
	sink += table[7];
}

int main(void)
{
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)(intptr_t)(i + 1));
	build_index();
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("demo: done\n");
	return 0;
}
