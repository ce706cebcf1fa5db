// cxxnames.cc - CPU time in C++ functions with namespaces, classes,
// templates, overloads and an inlined member, for the demangling and the
// symbolizer cross-check (tests/e2e/symbolizers.sh).
//
// Functions with internal linkage (static, in an anonymous namespace) have
// no linkage name in their DWARF: built with -DOUTLINE they are real
// functions, whose symbols name them; without, they are inlined, and only
// their DWARF does.  Both must give the same name.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace shapes {

template <typename T> class Accumulator {
public:
	explicit Accumulator(T seed) : acc_(seed) {}

	__attribute__((noinline)) T spin(int n)
	{
		for (int i = 0; i < n; i++)
			acc_ = step(acc_, i);
		return acc_;
	}

private:
	// Inlined into spin at -O2.
	static inline __attribute__((always_inline)) T step(T a, int i)
	{
		return a * static_cast<T>(3) + static_cast<T>(i & 7);
	}

	T acc_;
};

namespace detail {

// Two overloads: the parameter lists keep them apart.
__attribute__((noinline)) uint64_t churn(uint64_t x, int n)
{
	for (int i = 0; i < n; i++)
		x = (x ^ (x >> 31)) * 0x9e3779b97f4a7c15ULL + i;
	return x;
}

__attribute__((noinline)) double churn(double x, int n)
{
	for (int i = 0; i < n; i++)
		x = x * 0.999999 + 1.0 / (i + 1);
	return x;
}

} // namespace detail
} // namespace shapes

#ifdef OUTLINE
#define INTERNAL __attribute__((noinline))
#else
#define INTERNAL inline __attribute__((always_inline))
#endif

namespace {

struct Blob {
	unsigned char bytes[8];
};

double halve(double x)
{
	return x / 2;
}

// Parameters of many kinds, in the demangler's words.
INTERNAL uint64_t mix_in(uint64_t x, const char *tag, const Blob &b, double (*f)(double),
			 unsigned short n, long long k, shapes::Accumulator<int> *acc)
{
	for (unsigned short i = 0; i < n; i++)
		x = x * 31 + static_cast<unsigned char>(tag[i & 3]) + b.bytes[i & 7] +
		    static_cast<uint64_t>(f(static_cast<double>(i)) + static_cast<double>(k));
	return x + (acc != nullptr);
}

} // namespace

INTERNAL static uint64_t fold(uint64_t x, int n)
{
	for (int i = 0; i < n; i++)
		x = (x << 7) ^ (x >> 3) ^ static_cast<uint64_t>(i);
	return x;
}

// Not inlined: libbfd would name it after main (see symbolizers.sh).
__attribute__((noinline)) static double cpu_seconds()
{
	timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? std::atof(argv[1]) : 1.0;
	shapes::Accumulator<uint64_t> a(1);
	shapes::Accumulator<int> b(2);
	uint64_t sum = 0;
	double d = 0;

	while (cpu_seconds() < seconds) {
		sum += a.spin(200000);
		sum += static_cast<uint64_t>(b.spin(100000));
		sum += shapes::detail::churn(sum, 100000);
		d += shapes::detail::churn(d, 50000);
		Blob blob = { { 1, 2, 3, 4, 5, 6, 7, 8 } };
		sum += mix_in(sum, "abcd", blob, halve, 20000, 3, &b);
		sum += fold(sum, 20000);
	}
	std::printf("%llu %d\n", static_cast<unsigned long long>(sum & 1), d > 0);
	return 0;
}
