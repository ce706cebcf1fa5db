// allocviacxx.cc - blocks kept to the end through each form of C++'s
// operator new: via_new() 256 objects of 64 KiB by new, via_new_array()
// by new[], via_new_nothrow() by new (std::nothrow), via_new_aligned() by
// the aligned new (an over-aligned type).
#include <new>

struct big {
	char b[64 * 1024];
};
struct alignas(256) aligned_big {
	char b[64 * 1024];
};

static void *volatile sink;

extern "C" __attribute__((noinline)) void via_new()
{
	for (int i = 0; i < 256; i++)
		sink = new big;
}

extern "C" __attribute__((noinline)) void via_new_array()
{
	for (int i = 0; i < 256; i++)
		sink = new char[64 * 1024];
}

extern "C" __attribute__((noinline)) void via_new_nothrow()
{
	for (int i = 0; i < 256; i++)
		sink = new (std::nothrow) big;
}

extern "C" __attribute__((noinline)) void via_new_aligned()
{
	for (int i = 0; i < 256; i++)
		sink = new aligned_big;
}

int main()
{
	via_new();
	via_new_array();
	via_new_nothrow();
	via_new_aligned();
	return 0;
}
