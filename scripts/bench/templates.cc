// templates.cc - a C++ file whose compilation is long and template-heavy:
// std::regex, std::map, std::unordered_map, std::function, std::sort and
// streams instantiated for UNITS distinct types (default 4: about 10 s of
// cc1plus on the benchmark machine).  scripts/bench/analyzer profiles
// `g++ -O2 -c` of it, to symbolize a big stripped program (cc1plus).
#include <functional>
#include <map>
#include <regex>
#include <string>
#include <unordered_map>
#include <vector>
#include <algorithm>
#include <sstream>

template <int N> struct Tag {};

template <int N> struct Unit {
	std::map<std::string, std::vector<Tag<N> *>> index;
	std::unordered_map<int, std::function<int(int)>> calls;
	std::vector<std::pair<std::string, double>> rows;

	int run(const std::string &text)
	{
		std::regex re("([a-z]+)" + std::to_string(N) + "([0-9]*)");
		std::smatch m;
		int n = 0;
		if (std::regex_search(text, m, re))
			n += (int)m.size();
		calls[N] = [n](int x) { return x * N + n; };
		std::sort(rows.begin(), rows.end(), [](auto &a, auto &b) { return a.second < b.second; });
		std::ostringstream os;
		os << N << text;
		index[os.str()].push_back(nullptr);
		return calls[N](n);
	}
};

template <int N> int chain(const std::string &s)
{
	Unit<N> u;
	return u.run(s) + chain<N - 1>(s);
}
template <> int chain<0>(const std::string &) { return 0; }

#ifndef UNITS
#define UNITS 4
#endif
int entry(const std::string &s) { return chain<UNITS>(s); }
