/* test-names.c - C++ names made short (names.h): real demangled names, in
 * the three forms, and a profile's functions told apart when their short
 * names are the same
 *
 * The names are binutils' (nm -C), of libstdc++ (libstdc++.so.6, GCC 12)
 * and of a program of lambdas, operators, function templates, conversion
 * operators, an anonymous namespace, a local class and std containers,
 * std::function and std::thread built with g++ 12. */
#include "names.h"
#include "check.h"
#include "error.h"

#include <stdlib.h>

struct name_case {
	const char *name;
	const char *forms[3]; /* NAMES_SHORT, NAMES_PARAMS, NAMES_TEMPLATES */
};

static const struct name_case cases[] = {
	{ "operator new(unsigned long, void*)",
	  { "operator new",
	    "operator new(unsigned long, void*)",
	    "operator new" } },
	{ "std::_Rb_tree_iterator<std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const, std::vector<Box<double>, std::allocator<Box<double> > > > >::operator++()",
	  { "std::_Rb_tree_iterator::operator++",
	    "std::_Rb_tree_iterator::operator++()",
	    "std::_Rb_tree_iterator<std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const, std::vector<Box<double>, std::allocator<Box<double> > > > >::operator++" } },
	{ "std::_Function_base::_Base_manager<main::{lambda(int)#2}>::_M_manager(std::_Any_data&, std::_Any_data const&, std::_Manager_operation)",
	  { "std::_Function_base::_Base_manager::_M_manager",
	    "std::_Function_base::_Base_manager::_M_manager(std::_Any_data&, std::_Any_data const&, std::_Manager_operation)",
	    "std::_Function_base::_Base_manager<main::{lambda(int)#2}>::_M_manager" } },
	{ "bool operator><int>(Box<int> const&, int)",
	  { "operator>",
	    "operator>(Box const&, int)",
	    "operator><int>" } },
	{ "__gnu_cxx::__ops::_Val_comp_iter<main::{lambda(int, int)#1}>::_Val_comp_iter(__gnu_cxx::__ops::_Iter_comp_iter<main::{lambda(int, int)#1}>&&)",
	  { "__gnu_cxx::__ops::_Val_comp_iter::_Val_comp_iter",
	    "__gnu_cxx::__ops::_Val_comp_iter::_Val_comp_iter(__gnu_cxx::__ops::_Iter_comp_iter&&)",
	    "__gnu_cxx::__ops::_Val_comp_iter<main::{lambda(int, int)#1}>::_Val_comp_iter" } },
	{ "Box<int>::operator()(int) const",
	  { "Box::operator()",
	    "Box::operator()(int) const",
	    "Box<int>::operator()" } },
	{ "Box<int>::operator<<=(int)",
	  { "Box::operator<<=",
	    "Box::operator<<=(int)",
	    "Box<int>::operator<<=" } },
	{ "__gnu_cxx::__normal_iterator<Box<double>*, std::vector<Box<double>, std::allocator<Box<double> > > >::difference_type __gnu_cxx::operator-<Box<double>*, std::vector<Box<double>, std::allocator<Box<double> > > >(__gnu_cxx::__normal_iterator<Box<double>*, std::vector<Box<double>, std::allocator<Box<double> > > > const&, __gnu_cxx::__normal_iterator<Box<double>*, std::vector<Box<double>, std::allocator<Box<double> > > > const&)",
	  { "__gnu_cxx::operator-",
	    "__gnu_cxx::operator-(__gnu_cxx::__normal_iterator const&, __gnu_cxx::__normal_iterator const&)",
	    "__gnu_cxx::operator-<Box<double>*, std::vector<Box<double>, std::allocator<Box<double> > > >" } },
	{ "std::_Select1st<std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const, std::vector<Box<double>, std::allocator<Box<double> > > > >::operator()(std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const, std::vector<Box<double>, std::allocator<Box<double> > > > const&) const",
	  { "std::_Select1st::operator()",
	    "std::_Select1st::operator()(std::pair const&) const",
	    "std::_Select1st<std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const, std::vector<Box<double>, std::allocator<Box<double> > > > >::operator()" } },
	{ "std::vector<int, std::allocator<int> >::iterator first<int>(std::vector<int, std::allocator<int> >&)",
	  { "first",
	    "first(std::vector&)",
	    "first<int>" } },
	{ "getfp(int)",
	  { "getfp",
	    "getfp(int)",
	    "getfp" } },
	{ "auto std::__detail::_Synth3way::operator()<int*, int*>(int* const&, int* const&) const",
	  { "std::__detail::_Synth3way::operator()",
	    "std::__detail::_Synth3way::operator()(int* const&, int* const&) const",
	    "std::__detail::_Synth3way::operator()<int*, int*>" } },
	{ "__gnu_cxx::__ops::_Iter_comp_iter<main::{lambda(int, int)#1}>::_Iter_comp_iter(main::{lambda(int, int)#1})",
	  { "__gnu_cxx::__ops::_Iter_comp_iter::_Iter_comp_iter",
	    "__gnu_cxx::__ops::_Iter_comp_iter::_Iter_comp_iter(main::{lambda(int, int)#1})",
	    "__gnu_cxx::__ops::_Iter_comp_iter<main::{lambda(int, int)#1}>::_Iter_comp_iter" } },
	{ "__gnu_cxx::__normal_iterator<Box<double>*, std::vector<Box<double>, std::allocator<Box<double> > > >::operator*() const",
	  { "__gnu_cxx::__normal_iterator::operator*",
	    "__gnu_cxx::__normal_iterator::operator*() const",
	    "__gnu_cxx::__normal_iterator<Box<double>*, std::vector<Box<double>, std::allocator<Box<double> > > >::operator*" } },
	{ "std::_Function_base::_Base_manager<main::{lambda(int)#2}>::_M_get_pointer(std::_Any_data const&)",
	  { "std::_Function_base::_Base_manager::_M_get_pointer",
	    "std::_Function_base::_Base_manager::_M_get_pointer(std::_Any_data const&)",
	    "std::_Function_base::_Base_manager<main::{lambda(int)#2}>::_M_get_pointer" } },
	{ "bool __gnu_cxx::operator==<int*, std::vector<int, std::allocator<int> > >(__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > > const&, __gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > > const&)",
	  { "__gnu_cxx::operator==",
	    "__gnu_cxx::operator==(__gnu_cxx::__normal_iterator const&, __gnu_cxx::__normal_iterator const&)",
	    "__gnu_cxx::operator==<int*, std::vector<int, std::allocator<int> > >" } },
	{ "__gnu_cxx::__normal_iterator<Box<double>*, void>::operator++()",
	  { "__gnu_cxx::__normal_iterator::operator++",
	    "__gnu_cxx::__normal_iterator::operator++()",
	    "__gnu_cxx::__normal_iterator<Box<double>*, void>::operator++" } },
	{ "(anonymous namespace)::anon_fn(int)",
	  { "(anonymous namespace)::anon_fn",
	    "(anonymous namespace)::anon_fn(int)",
	    "(anonymous namespace)::anon_fn" } },
	{ "__gnu_cxx::__normal_iterator<Box<double>*, std::vector<Box<double>, std::allocator<Box<double> > > >::operator-(long) const",
	  { "__gnu_cxx::__normal_iterator::operator-",
	    "__gnu_cxx::__normal_iterator::operator-(long) const",
	    "__gnu_cxx::__normal_iterator<Box<double>*, std::vector<Box<double>, std::allocator<Box<double> > > >::operator-" } },
	{ "Box<int>::operator int() const",
	  { "Box::operator int",
	    "Box::operator int() const",
	    "Box<int>::operator int" } },
	{ "std::less<Box<int> >::operator()(Box<int> const&, Box<int> const&) const",
	  { "std::less::operator()",
	    "std::less::operator()(Box const&, Box const&) const",
	    "std::less<Box<int> >::operator()" } },
	{ "std::function<int (int)>::operator()(int) const",
	  { "std::function::operator()",
	    "std::function::operator()(int) const",
	    "std::function<int (int)>::operator()" } },
	{ "decltype (std::__detail::__synth3way((declval<int*&>)(), (declval<int*&>)())) __gnu_cxx::operator<=><int*, std::vector<int, std::allocator<int> > >(__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > > const&, __gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > > const&)",
	  { "__gnu_cxx::operator<=>",
	    "__gnu_cxx::operator<=>(__gnu_cxx::__normal_iterator const&, __gnu_cxx::__normal_iterator const&)",
	    "__gnu_cxx::operator<=><int*, std::vector<int, std::allocator<int> > >" } },
	{ "(anonymous namespace)::Anon::get() const",
	  { "(anonymous namespace)::Anon::get",
	    "(anonymous namespace)::Anon::get() const",
	    "(anonymous namespace)::Anon::get" } },
	{ "Box<int>::operator<(Box<int> const&) const",
	  { "Box::operator<",
	    "Box::operator<(Box const&) const",
	    "Box<int>::operator<" } },
	{ "std::_Function_base::_Base_manager<main::{lambda(int)#2}>::_M_destroy(std::_Any_data&, std::integral_constant<bool, true>)",
	  { "std::_Function_base::_Base_manager::_M_destroy",
	    "std::_Function_base::_Base_manager::_M_destroy(std::_Any_data&, std::integral_constant)",
	    "std::_Function_base::_Base_manager<main::{lambda(int)#2}>::_M_destroy" } },
	{ "std::_Rb_tree_iterator<std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const, std::vector<Box<double>, std::allocator<Box<double> > > > >::operator*() const",
	  { "std::_Rb_tree_iterator::operator*",
	    "std::_Rb_tree_iterator::operator*() const",
	    "std::_Rb_tree_iterator<std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const, std::vector<Box<double>, std::allocator<Box<double> > > > >::operator*" } },
	{ "std::_Head_base<0ul, main::{lambda()#5}, true>::_Head_base<main::{lambda()#5}>(main::{lambda()#5}&&)",
	  { "std::_Head_base::_Head_base",
	    "std::_Head_base::_Head_base(main::{lambda()#5}&&)",
	    "std::_Head_base<0ul, main::{lambda()#5}, true>::_Head_base<main::{lambda()#5}>" } },
	{ "std::default_delete<U>::operator()(U*) const",
	  { "std::default_delete::operator()",
	    "std::default_delete::operator()(U*) const",
	    "std::default_delete<U>::operator()" } },
	{ "__gnu_cxx::__ops::_Iter_comp_iter<main::{lambda(int, int)#1}> __gnu_cxx::__ops::__iter_comp_iter<main::{lambda(int, int)#1}>(main::{lambda(int, int)#1})",
	  { "__gnu_cxx::__ops::__iter_comp_iter",
	    "__gnu_cxx::__ops::__iter_comp_iter(main::{lambda(int, int)#1})",
	    "__gnu_cxx::__ops::__iter_comp_iter<main::{lambda(int, int)#1}>" } },
	{ "__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > >::operator+(long) const",
	  { "__gnu_cxx::__normal_iterator::operator+",
	    "__gnu_cxx::__normal_iterator::operator+(long) const",
	    "__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > >::operator+" } },
	{ "void std::_Function_base::_Base_manager<main::{lambda(int)#2}>::_M_init_functor<main::{lambda(int)#2} const&>(std::_Any_data&, main::{lambda(int)#2} const&)",
	  { "std::_Function_base::_Base_manager::_M_init_functor",
	    "std::_Function_base::_Base_manager::_M_init_functor(std::_Any_data&, main::{lambda(int)#2} const&)",
	    "std::_Function_base::_Base_manager<main::{lambda(int)#2}>::_M_init_functor<main::{lambda(int)#2} const&>" } },
	{ "std::_Any_data::_M_access() const",
	  { "std::_Any_data::_M_access",
	    "std::_Any_data::_M_access() const",
	    "std::_Any_data::_M_access" } },
	{ "void std::_Function_base::_Base_manager<main::{lambda(int)#2}>::_M_create<main::{lambda(int)#2} const&>(std::_Any_data&, main::{lambda(int)#2} const&, std::integral_constant<bool, true>)",
	  { "std::_Function_base::_Base_manager::_M_create",
	    "std::_Function_base::_Base_manager::_M_create(std::_Any_data&, main::{lambda(int)#2} const&, std::integral_constant)",
	    "std::_Function_base::_Base_manager<main::{lambda(int)#2}>::_M_create<main::{lambda(int)#2} const&>" } },
	{ "bool __gnu_cxx::__ops::_Val_comp_iter<main::{lambda(int, int)#1}>::operator()<int, __gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > > >(int&, __gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > >)",
	  { "__gnu_cxx::__ops::_Val_comp_iter::operator()",
	    "__gnu_cxx::__ops::_Val_comp_iter::operator()(int&, __gnu_cxx::__normal_iterator)",
	    "__gnu_cxx::__ops::_Val_comp_iter<main::{lambda(int, int)#1}>::operator()<int, __gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > > >" } },
	{ "std::_Identity<Box<int> >::operator()(Box<int> const&) const",
	  { "std::_Identity::operator()",
	    "std::_Identity::operator()(Box const&) const",
	    "std::_Identity<Box<int> >::operator()" } },
	{ "void call<&(target(int))>(int)",
	  { "call",
	    "call(int)",
	    "call<&(target(int))>" } },
	{ "std::_Tuple_impl<0ul, main::{lambda()#5}>::_Tuple_impl<main::{lambda()#5}>(main::{lambda()#5}&&)",
	  { "std::_Tuple_impl::_Tuple_impl",
	    "std::_Tuple_impl::_Tuple_impl(main::{lambda()#5}&&)",
	    "std::_Tuple_impl<0ul, main::{lambda()#5}>::_Tuple_impl<main::{lambda()#5}>" } },
	{ "std::_Rb_tree_node<Box<int> >* std::_Rb_tree<Box<int>, Box<int>, std::_Identity<Box<int> >, std::less<Box<int> >, std::allocator<Box<int> > >::_Alloc_node::operator()<Box<int> const&>(Box<int> const&) const",
	  { "std::_Rb_tree::_Alloc_node::operator()",
	    "std::_Rb_tree::_Alloc_node::operator()(Box const&) const",
	    "std::_Rb_tree<Box<int>, Box<int>, std::_Identity<Box<int> >, std::less<Box<int> >, std::allocator<Box<int> > >::_Alloc_node::operator()<Box<int> const&>" } },
	{ "std::unique_ptr<U, std::default_delete<U> >::operator->() const",
	  { "std::unique_ptr::operator->",
	    "std::unique_ptr::operator->() const",
	    "std::unique_ptr<U, std::default_delete<U> >::operator->" } },
	{ "operator new(unsigned long, std::align_val_t, std::nothrow_t const&)@@CXXABI_1.3.11",
	  { "operator new",
	    "operator new(unsigned long, std::align_val_t, std::nothrow_t const&)",
	    "operator new" } },
	{ "std::basic_ios<wchar_t, std::char_traits<wchar_t> >::operator!() const@@GLIBCXX_3.4",
	  { "std::basic_ios::operator!",
	    "std::basic_ios::operator!() const",
	    "std::basic_ios<wchar_t, std::char_traits<wchar_t> >::operator!" } },
	{ "operator delete[](void*, unsigned long)@@CXXABI_1.3.9",
	  { "operator delete[]",
	    "operator delete[](void*, unsigned long)",
	    "operator delete[]" } },
	{ "std::basic_istream<char, std::char_traits<char> >& std::operator>><std::char_traits<char> >(std::basic_istream<char, std::char_traits<char> >&, unsigned char&)@@GLIBCXX_3.4",
	  { "std::operator>>",
	    "std::operator>>(std::basic_istream&, unsigned char&)",
	    "std::operator>><std::char_traits<char> >" } },
	{ "std::__cxx11::basic_string<wchar_t, std::char_traits<wchar_t>, std::allocator<wchar_t> >::operator std::basic_string_view<wchar_t, std::char_traits<wchar_t> >() const@@GLIBCXX_3.4.26",
	  { "std::__cxx11::basic_string::operator std::basic_string_view",
	    "std::__cxx11::basic_string::operator std::basic_string_view() const",
	    "std::__cxx11::basic_string<wchar_t, std::char_traits<wchar_t>, std::allocator<wchar_t> >::operator std::basic_string_view<wchar_t, std::char_traits<wchar_t> >" } },
	{ "std::basic_ios<char, std::char_traits<char> >::operator void*() const@@GLIBCXX_3.4",
	  { "std::basic_ios::operator void*",
	    "std::basic_ios::operator void*() const",
	    "std::basic_ios<char, std::char_traits<char> >::operator void*" } },
	{ "operator new[](unsigned long, std::nothrow_t const&)@@GLIBCXX_3.4",
	  { "operator new[]",
	    "operator new[](unsigned long, std::nothrow_t const&)",
	    "operator new[]" } },
	{ "virtual thunk to std::basic_stringstream<wchar_t, std::char_traits<wchar_t>, std::allocator<wchar_t> >::~basic_stringstream()@@GLIBCXX_3.4",
	  { "virtual thunk to std::basic_stringstream::~basic_stringstream",
	    "virtual thunk to std::basic_stringstream::~basic_stringstream()",
	    "virtual thunk to std::basic_stringstream<wchar_t, std::char_traits<wchar_t>, std::allocator<wchar_t> >::~basic_stringstream" } },
	{ "std::basic_ios<char, std::char_traits<char> >::operator bool() const@@GLIBCXX_3.4.21",
	  { "std::basic_ios::operator bool",
	    "std::basic_ios::operator bool() const",
	    "std::basic_ios<char, std::char_traits<char> >::operator bool" } },
	{ "std::basic_istream<wchar_t, std::char_traits<wchar_t> >::operator>>(std::basic_istream<wchar_t, std::char_traits<wchar_t> >& (*)(std::basic_istream<wchar_t, std::char_traits<wchar_t> >&))@@GLIBCXX_3.4",
	  { "std::basic_istream::operator>>",
	    "std::basic_istream::operator>>(std::basic_istream& (*)(std::basic_istream&))",
	    "std::basic_istream<wchar_t, std::char_traits<wchar_t> >::operator>>" } },
	{ "__gnu_cxx::stdio_sync_filebuf<wchar_t, std::char_traits<wchar_t> >::operator=(__gnu_cxx::stdio_sync_filebuf<wchar_t, std::char_traits<wchar_t> >&&)@@GLIBCXX_3.4.21",
	  { "__gnu_cxx::stdio_sync_filebuf::operator=",
	    "__gnu_cxx::stdio_sync_filebuf::operator=(__gnu_cxx::stdio_sync_filebuf&&)",
	    "__gnu_cxx::stdio_sync_filebuf<wchar_t, std::char_traits<wchar_t> >::operator=" } },
	{ "std::tr1::hash<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > >::operator()(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >) const@@GLIBCXX_3.4.21",
	  { "std::tr1::hash::operator()",
	    "std::tr1::hash::operator()(std::__cxx11::basic_string) const",
	    "std::tr1::hash<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > >::operator()" } },
	{ "std::filesystem::path::_List::_Impl_deleter::operator()(std::filesystem::path::_List::_Impl*) const@@GLIBCXX_3.4.26",
	  { "std::filesystem::path::_List::_Impl_deleter::operator()",
	    "std::filesystem::path::_List::_Impl_deleter::operator()(std::filesystem::path::_List::_Impl*) const",
	    "std::filesystem::path::_List::_Impl_deleter::operator()" } },
	{ "std::basic_string<wchar_t, std::char_traits<wchar_t>, std::allocator<wchar_t> >::operator=(wchar_t const*)@@GLIBCXX_3.4",
	  { "std::basic_string::operator=",
	    "std::basic_string::operator=(wchar_t const*)",
	    "std::basic_string<wchar_t, std::char_traits<wchar_t>, std::allocator<wchar_t> >::operator=" } },
	{ "std::__exception_ptr::exception_ptr::operator void (std::__exception_ptr::exception_ptr::*)()() const@@CXXABI_1.3.3",
	  { "std::__exception_ptr::exception_ptr::operator void (std::__exception_ptr::exception_ptr::*)()",
	    "std::__exception_ptr::exception_ptr::operator void (std::__exception_ptr::exception_ptr::*)()() const",
	    "std::__exception_ptr::exception_ptr::operator void (std::__exception_ptr::exception_ptr::*)()" } },
	{ "std::ostream::sentry::operator bool() const@@GLIBCXX_3.4",
	  { "std::ostream::sentry::operator bool",
	    "std::ostream::sentry::operator bool() const",
	    "std::ostream::sentry::operator bool" } },
	{ "std::__exception_ptr::exception_ptr::operator!() const@@CXXABI_1.3.3",
	  { "std::__exception_ptr::exception_ptr::operator!",
	    "std::__exception_ptr::exception_ptr::operator!() const",
	    "std::__exception_ptr::exception_ptr::operator!" } },
	{ "std::hash<std::basic_string<wchar_t, std::char_traits<wchar_t>, std::allocator<wchar_t> > const&>::operator()(std::basic_string<wchar_t, std::char_traits<wchar_t>, std::allocator<wchar_t> > const&) const@@GLIBCXX_3.4.10",
	  { "std::hash::operator()",
	    "std::hash::operator()(std::basic_string const&) const",
	    "std::hash<std::basic_string<wchar_t, std::char_traits<wchar_t>, std::allocator<wchar_t> > const&>::operator()" } },
	{ "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::operator[](unsigned long) const@@GLIBCXX_3.4.21",
	  { "std::__cxx11::basic_string::operator[]",
	    "std::__cxx11::basic_string::operator[](unsigned long) const",
	    "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::operator[]" } },
	{ "std::basic_istream<wchar_t, std::char_traits<wchar_t> >::sentry::operator bool() const@@GLIBCXX_3.4",
	  { "std::basic_istream::sentry::operator bool",
	    "std::basic_istream::sentry::operator bool() const",
	    "std::basic_istream<wchar_t, std::char_traits<wchar_t> >::sentry::operator bool" } },
	{ "main::{lambda(int, int)#1}::operator()(int, int) const",
	  { "main::{lambda(int, int)#1}::operator()",
	    "main::{lambda(int, int)#1}::operator()(int, int) const",
	    "main::{lambda(int, int)#1}::operator()" } },
	{ "main::{lambda()#5}::operator()() const",
	  { "main::{lambda()#5}::operator()",
	    "main::{lambda()#5}::operator()() const",
	    "main::{lambda()#5}::operator()" } },
	{ "bool operator< <int>(Box<int> const&, int)",
	  { "operator<",
	    "operator<(Box const&, int)",
	    "operator< <int>" } },
	{ "operator\"\" _km(long double)",
	  { "operator\"\" _km",
	    "operator\"\" _km(long double)",
	    "operator\"\" _km" } },
	{ "local()::L::h(int)",
	  { "local::L::h",
	    "local::L::h(int)",
	    "local::L::h" } },
	{ "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_construct<char const*>(char const*, char const*, std::forward_iterator_tag)::_Guard::_Guard(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >*)",
	  { "std::__cxx11::basic_string::_M_construct::_Guard::_Guard",
	    "std::__cxx11::basic_string::_M_construct::_Guard::_Guard(std::__cxx11::basic_string*)",
	    "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_construct<char const*>::_Guard::_Guard" } },
	{ "tag[abi:cxx11]()",
	  { "tag",
	    "tag()",
	    "tag" } },
	{ "non-virtual thunk to U::g()",
	  { "non-virtual thunk to U::g",
	    "non-virtual thunk to U::g()",
	    "non-virtual thunk to U::g" } },
	{ "f(int)::{default arg#1}()",
	  { "f::{default arg#1}",
	    "f::{default arg#1}()",
	    "f::{default arg#1}" } },
	{ "f::{unnamed type#1}::g()",
	  { "f::{unnamed type#1}::g",
	    "f::{unnamed type#1}::g()",
	    "f::{unnamed type#1}::g" } },
	{ "shapes::Accumulator<unsigned long>::step(unsigned long, int) [clone .isra.0]",
	  { "shapes::Accumulator::step [clone .isra.0]",
	    "shapes::Accumulator::step(unsigned long, int) [clone .isra.0]",
	    "shapes::Accumulator<unsigned long>::step [clone .isra.0]" } },
	{ "std::vector<int, std::allocator<int> >::push_back(int const&)@plt",
	  { "std::vector::push_back@plt",
	    "std::vector::push_back(int const&)@plt",
	    "std::vector<int, std::allocator<int> >::push_back@plt" } },
	{ "<alloc::vec::Vec<T> as core::ops::drop::Drop>::drop",
	  { "<alloc::vec::Vec as core::ops::drop::Drop>::drop",
	    "<alloc::vec::Vec as core::ops::drop::Drop>::drop",
	    "<alloc::vec::Vec<T> as core::ops::drop::Drop>::drop" } },
	{ "Foo::operator std::vector<int, std::allocator<int> >() const",
	  { "Foo::operator std::vector",
	    "Foo::operator std::vector() const",
	    "Foo::operator std::vector<int, std::allocator<int> >" } },
	{ "a::b(int) const &&",
	  { "a::b",
	    "a::b(int) const &&",
	    "a::b" } },
	{ "f() noexcept",
	  { "f",
	    "f() noexcept",
	    "f" } },
	{ "x::operator->*(int)",
	  { "x::operator->*",
	    "x::operator->*(int)",
	    "x::operator->*" } },
	{ "std::vector<int>::push_back",
	  { "std::vector::push_back",
	    "std::vector::push_back",
	    "std::vector<int>::push_back" } },
	/* C++ as perf names it, its parameter list kept */
	{ "foo(int, char const*)", { "foo", "foo(int, char const*)", "foo" } },
	/* Java from JIT perf maps: JVM descriptors, class::method, HotSpot's */
	{ "Lio/netty/util/concurrent/SingleThreadEventExecutor$4;.run()V",
	  { "io.netty.util.concurrent.SingleThreadEventExecutor$4.run",
	    "io.netty.util.concurrent.SingleThreadEventExecutor$4.run()V",
	    "io.netty.util.concurrent.SingleThreadEventExecutor$4.run" } },
	{ "Ljava/lang/Thread;::run", { "java.lang.Thread.run", "java.lang.Thread.run", "java.lang.Thread.run" } },
	{ "LFoo;.<init>(I[Ljava/lang/String;)[J", { "Foo.<init>", "Foo.<init>(I[Ljava/lang/String;)[J", "Foo.<init>" } },
	{ "java.lang.Thread::run()V", { "java.lang.Thread.run", "java.lang.Thread.run()V", "java.lang.Thread.run" } },
	{ "java.lang.String Spin.text(int)", { "Spin.text", "Spin.text(int)", "Spin.text" } },
	{ "byte[] java.util.Arrays.copyOf(byte[], int)",
	  { "java.util.Arrays.copyOf", "java.util.Arrays.copyOf(byte[], int)", "java.util.Arrays.copyOf" } },
	{ "void Main.lambda$main$0()", { "Main.lambda$main$0", "Main.lambda$main$0()", "Main.lambda$main$0" } },
};

/* Names that are not demangled C++, or cannot be read as such: shown as
 * they are, in every form. */
static const char *const left_alone[] = {
	"main",
	"main.(*T).method",           /* Go */
	"runtime.mallocgc",
	"process (main.py:12)",       /* py-spy */
	"<module>",
	"java/util/HashMap.get",
	"StubRoutines (1)",           /* HotSpot's stubs */
	"Interpreter",
	"py::leaf:/tmp/work.py",      /* Python's perf map */
	"LFoo;.bar(X)V",              /* no JVM descriptor */
	"Lfoo;",
	"_ZN3foo3barEv",              /* mangled (--no-demangle) */
	"_ZN3foo3barEv@plt",
	"[kernel]",
	"libfoo.so+0x1234",
	"foo(int",                    /* brackets that do not match */
	"foo)(",
	"a::b<<<",
	"a::b<int>(",
	"a::b<int)>::c()",
	"void (*std::signal<int>(int))(int)", /* a return type around the name */
	"::",
	"operator",
	"operator()",
	"",
};

static void test_forms(void)
{
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		for (int f = 0; f < 3; f++) {
			char *s = names_shorten(cases[i].name, (enum names_form)f);
			CHECK(s != NULL);
			if (s && strcmp(s, cases[i].forms[f]) != 0)
				fprintf(stderr, "%s\n  form %d: %s\n  wanted: %s\n", cases[i].name, f, s,
					cases[i].forms[f]);
			CHECK_STR(s ? s : "", cases[i].forms[f]);
			free(s);
		}
	for (size_t i = 0; i < sizeof left_alone / sizeof *left_alone; i++)
		for (int f = 0; f < 3; f++) {
			char *s = names_shorten(left_alone[i], (enum names_form)f);
			CHECK_STR(s ? s : "(null)", left_alone[i]);
			free(s);
		}
}

/* Deep or long names: read to the end or shown whole, never past it. */
static void test_deep(void)
{
	size_t n = 100000;
	char *deep = malloc(2 * n + 16), *s;

	if (!deep)
		return;
	/* 50,000 nested template arguments: longer than is shown, cut */
	memcpy(deep, "a::b", 4);
	memset(deep + 4, '<', n / 2);
	memset(deep + 4 + n / 2, '>', n / 2);
	strcpy(deep + 4 + n, "::c()");
	s = names_shorten(deep, NAMES_SHORT);
	CHECK(s && strlen(s) == NAMES_MAX_SHOWN + 3);
	CHECK(s && strncmp(s, deep, NAMES_MAX_SHOWN) == 0 && strcmp(s + NAMES_MAX_SHOWN, "...") == 0);
	free(s);
	/* cut at a character: "é" (2 bytes) across the limit */
	memset(deep, 'x', NAMES_MAX_SHOWN - 1);
	strcpy(deep + NAMES_MAX_SHOWN - 1, "\xc3\xa9::f()");
	s = names_shorten(deep, NAMES_PARAMS);
	CHECK(s && strlen(s) == NAMES_MAX_SHOWN - 1 + 3 && strcmp(s + NAMES_MAX_SHOWN - 1, "...") == 0);
	free(s);
	/* as long as is shown: read */
	memset(deep, 'x', NAMES_MAX_SHOWN - 8);
	strcpy(deep + NAMES_MAX_SHOWN - 8, "::f(int)");
	s = names_shorten(deep, NAMES_SHORT);
	CHECK(s && strlen(s) == NAMES_MAX_SHOWN - 5 && strcmp(s + NAMES_MAX_SHOWN - 8, "::f") == 0);
	free(s);
	/* 200 nested: read */
	memcpy(deep, "a::b", 4);
	memset(deep + 4, '<', 200);
	memset(deep + 204, '>', 200);
	strcpy(deep + 404, "::c(int)");
	s = names_shorten(deep, NAMES_SHORT);
	CHECK_STR(s ? s : "", "a::b::c");
	free(s);
	free(deep);
}

static uint32_t add_fn(struct pv_profile *p, const char *name, const char *file)
{
	uint32_t n = pv_intern_str(p, name);
	return pv_get_function(p, n, n, pv_intern_str(p, file), 0);
}

static void test_told_apart(void)
{
	struct pv_profile *p = pv_profile_new();
	/* instantiations: their template arguments are shorter */
	uint32_t spin_ul = add_fn(p, "shapes::Accumulator<unsigned long>::spin(int)", "a.cc");
	uint32_t spin_i = add_fn(p, "shapes::Accumulator<int>::spin(int)", "a.cc");
	/* overloads: only their parameter lists differ */
	uint32_t churn_d = add_fn(p, "shapes::detail::churn(double, int)", "a.cc");
	uint32_t churn_ul = add_fn(p, "shapes::detail::churn(unsigned long, int)", "a.cc");
	/* alone: short */
	uint32_t push = add_fn(p, "std::vector<int, std::allocator<int> >::push_back(int const&)", "v.h");
	/* a template and not: its template arguments tell them apart */
	uint32_t k_i = add_fn(p, "k(int)", "a.cc");
	uint32_t kt_i = add_fn(p, "int k<int>(int)", "a.cc");
	uint32_t kt_l = add_fn(p, "int k<long>(int)", "a.cc");
	/* neither tells all three apart: whole */
	uint32_t g_i = add_fn(p, "g(int)", "a.cc");
	uint32_t g_d = add_fn(p, "g(double)", "a.cc");
	uint32_t gt_i = add_fn(p, "int g<int>(int)", "a.cc");
	/* the same name in two files (static functions): one short name */
	uint32_t h1 = add_fn(p, "helper(int)", "a.cc"), h2 = add_fn(p, "helper(int)", "b.cc");
	/* a C function and a C++ one of one name */
	uint32_t c_fn = add_fn(p, "step", "c.c"), cxx_fn = add_fn(p, "ns::step(int)", "d.cc");
	uint32_t c_step = add_fn(p, "step2", "c.c"), cxx_step = add_fn(p, "step2(int)", "d.cc");
	struct names *nm = names_new(p), *cp;

	CHECK(nm != NULL);
	if (!nm) {
		pv_profile_free(p);
		return;
	}
	CHECK_STR(names_get(nm, p, spin_ul), "shapes::Accumulator<unsigned long>::spin");
	CHECK_STR(names_get(nm, p, spin_i), "shapes::Accumulator<int>::spin");
	CHECK_STR(names_get(nm, p, churn_d), "shapes::detail::churn(double, int)");
	CHECK_STR(names_get(nm, p, churn_ul), "shapes::detail::churn(unsigned long, int)");
	CHECK_STR(names_get(nm, p, push), "std::vector::push_back");
	CHECK_STR(names_get(nm, p, k_i), "k");
	CHECK_STR(names_get(nm, p, kt_i), "k<int>");
	CHECK_STR(names_get(nm, p, kt_l), "k<long>");
	CHECK_STR(names_get(nm, p, g_i), "g(int)");
	CHECK_STR(names_get(nm, p, g_d), "g(double)");
	CHECK_STR(names_get(nm, p, gt_i), "int g<int>(int)");
	CHECK_STR(names_get(nm, p, h1), "helper");
	CHECK_STR(names_get(nm, p, h2), "helper");
	CHECK_STR(names_get(nm, p, c_fn), "step");
	CHECK_STR(names_get(nm, p, cxx_fn), "ns::step");
	CHECK_STR(names_get(nm, p, c_step), "step2");
	CHECK_STR(names_get(nm, p, cxx_step), "step2(int)");
	/* out of range: nothing */
	CHECK_STR(names_get(nm, p, (uint32_t)p->nfunctions), "");
	/* no table: whole */
	CHECK_STR(names_get(NULL, p, push), "std::vector<int, std::allocator<int> >::push_back(int const&)");
	cp = names_copy(nm);
	CHECK(cp != NULL);
	names_free(nm);
	if (cp) {
		CHECK_STR(names_get(cp, p, churn_d), "shapes::detail::churn(double, int)");
		CHECK_STR(names_get(cp, p, push), "std::vector::push_back");
	}
	names_free(cp);
	names_free(NULL);
	pv_profile_free(p);
}

static void quiet_sink(enum pv_level level, const char *msg)
{
	(void)level;
	(void)msg;
}

int main(void)
{
	pv_error_set_sink(quiet_sink);
	test_forms();
	test_deep();
	test_told_apart();
	return check_done("test-names");
}
