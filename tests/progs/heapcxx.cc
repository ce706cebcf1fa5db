// heapcxx.cc - C++'s allocations for collect-heap's tests: cxx_new() keeps
// 256 objects of 64 KiB made by new, cxx_new_array() 256 arrays by new[],
// cxx_new_aligned() 256 over-aligned objects (operator new with
// std::align_val_t), and cxx_deleted() makes 256 and deletes each at once.
#include <cstdlib>
#include <cstring>

struct big {
	char b[64 * 1024];
};
struct alignas(256) aligned_big {
	char b[64 * 1024];
};

static void *volatile sink;

extern "C" __attribute__((noinline)) void cxx_new()
{
	for (int i = 0; i < 256; i++)
		sink = new big;
}

extern "C" __attribute__((noinline)) void cxx_new_array()
{
	for (int i = 0; i < 256; i++)
		sink = new char[64 * 1024];
}

extern "C" __attribute__((noinline)) void cxx_new_aligned()
{
	for (int i = 0; i < 256; i++)
		sink = new aligned_big;
}

extern "C" __attribute__((noinline)) void cxx_deleted()
{
	for (int i = 0; i < 256; i++) {
		big *volatile p = new big;
		sink = p;
		delete p;
	}
}

int main()
{
	cxx_new();
	cxx_new_array();
	cxx_new_aligned();
	cxx_deleted();
	return 0;
}
