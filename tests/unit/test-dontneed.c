/* test-dontneed.c - what the trace writer (collectors/preload/writer.c)
 * counts on should it ever drop a page a writer is still in: on a shared
 * file mapping, MADV_DONTNEED only takes the pages out of the mapping; the
 * page cache keeps them, dirty or not, and a write to a dropped page
 * faults it back in.  Writers fill a mapping byte by byte while another
 * thread drops all of it in a loop; the file must then hold every byte. */
#include "check.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>

#define SIZE (64u << 20)
#define WRITERS 4
#define SLOT 1000

static unsigned char *map;
static atomic_int done;
static atomic_long drops;

static unsigned char byte_at(size_t off)
{
	return (unsigned char)(off / SLOT + off % SLOT) | 1;
}

/* Writer id fills every WRITERS-th slot. */
static void *writer(void *arg)
{
	size_t id = (size_t)(uintptr_t)arg;

	for (size_t off = id * SLOT; off + SLOT <= SIZE; off += WRITERS * SLOT)
		for (size_t i = 0; i < SLOT; i++)
			map[off + i] = byte_at(off + i);
	return NULL;
}

static void *dropper(void *unused)
{
	(void)unused;
	while (!atomic_load(&done)) {
		madvise(map, SIZE, MADV_DONTNEED);
		atomic_fetch_add(&drops, 1);
	}
	return NULL;
}

int main(void)
{
	char name[] = "/tmp/profview-dontneed.XXXXXX";
	int fd = mkstemp(name);
	pthread_t w[WRITERS], d;
	unsigned char *back;
	size_t got = 0, wrong = 0;

	CHECK(fd >= 0);
	if (fd < 0)
		return check_done("dontneed");
	unlink(name);
	CHECK_EQ(ftruncate(fd, SIZE), 0);
	map = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(map != MAP_FAILED);
	if (map == MAP_FAILED)
		return check_done("dontneed");
	pthread_create(&d, NULL, dropper, NULL);
	for (size_t i = 0; i < WRITERS; i++)
		pthread_create(&w[i], NULL, writer, (void *)(uintptr_t)i);
	for (size_t i = 0; i < WRITERS; i++)
		pthread_join(w[i], NULL);
	atomic_store(&done, 1);
	pthread_join(d, NULL);
	munmap(map, SIZE);
	/* read back through the file, not the mapping */
	back = malloc(SIZE);
	CHECK(back != NULL);
	while (back != NULL && got < SIZE) {
		ssize_t r = pread(fd, back + got, SIZE - got, (off_t)got);

		if (r <= 0)
			break;
		got += (size_t)r;
	}
	CHECK_EQ(got, SIZE);
	for (size_t off = 0; back != NULL && off < SIZE / SLOT * SLOT; off++)
		wrong += back[off] != byte_at(off);
	CHECK_EQ(wrong, 0);
	CHECK(atomic_load(&drops) > 0);
	printf("the mapping was dropped %ld times while it was written\n", atomic_load(&drops));
	free(back);
	close(fd);
	return check_done("dontneed");
}
