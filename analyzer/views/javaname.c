/* javaname.c - Java method names made short (see javaname.h) */
#include "javaname.h"
#include "error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A character of a Java identifier as JIT maps print them ("$" of inner
 * classes, "<init>" and "<clinit>", "lambda$main$0"). */
static bool java_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
	       c == '$' || c == '<' || c == '>' || (unsigned char)c >= 0x80;
}

/* Is [s, s+n) a class or method name: identifiers joined by sep ('/' or
 * '.'), none empty? */
static bool java_path(const char *s, size_t n, char sep)
{
	bool prev_sep = true;

	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == sep) {
			if (prev_sep)
				return false;
			prev_sep = true;
		} else if (java_char(s[i])) {
			prev_sep = false;
		} else {
			return false;
		}
	}
	return !prev_sep;
}

/* Is [s, s+n) a JVM return descriptor: "V", "I", "[J", "Ljava/lang/String;"? */
static bool java_return(const char *s, size_t n)
{
	while (n && *s == '[')
		s++, n--;
	if (n == 1)
		return strchr("VZBCSIJFD", *s) != NULL;
	return n > 2 && s[0] == 'L' && s[n - 1] == ';' && java_path(s + 1, n - 2, '/');
}

/* Is [s, s+n) JVM descriptors of parameters, one after another: "I[JLjava/lang/String;"? */
static bool java_param_descriptors(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t start = i;
		while (i < n && s[i] == '[')
			i++;
		if (i < n && s[i] == 'L') {
			const char *semi = memchr(s + i, ';', n - i);
			if (!semi)
				return false;
			i = (size_t)(semi - s) + 1;
		} else if (i < n && strchr("ZBCSIJFD", s[i]) && s[i]) {
			i++;
		} else {
			return false;
		}
		if (!java_return(s + start, i - start))
			return false;
	}
	return true;
}

/* "CLASS" (sep '/' or '.') "." METHOD PARAMS into *out. */
static int java_join(const char *cls, size_t ncls, char sep, const char *m, size_t nm, const char *params,
		     bool with_params, char **out)
{
	size_t np = with_params && params ? strlen(params) : 0;
	char *s = malloc(ncls + 1 + nm + np + 1);

	if (!s) {
		pv_oom();
		return -1;
	}
	for (size_t i = 0; i < ncls; i++)
		s[i] = cls[i] == sep ? '.' : cls[i];
	s[ncls] = '.';
	memcpy(s + ncls + 1, m, nm);
	memcpy(s + ncls + 1 + nm, params ? params : "", np);
	s[ncls + 1 + nm + np] = '\0';
	*out = s;
	return 1;
}

/* The parameter list at p ("(...)" and what follows it) when it ends the
 * name as a JVM descriptor's does ("(I)V") or a Java signature's ("(int,
 * byte[])"); NULL when p is the end, (char *)-1 when it is neither. */
static const char *java_params(const char *p, bool descriptor)
{
	const char *close;

	if (!*p)
		return NULL;
	if (*p != '(' || !(close = strchr(p, ')')) || memchr(p + 1, '(', (size_t)(close - p - 1)))
		return (const char *)-1;
	if (descriptor ? !java_return(close + 1, strlen(close + 1)) ||
				 !java_param_descriptors(p + 1, (size_t)(close - p - 1))
		       : close[1] != '\0')
		return (const char *)-1;
	return p;
}

int javaname_shorten(const char *name, bool params, char **out)
{
	const char *semi, *colons, *paren, *m, *ps;
	size_t n = strlen(name);

	/* "Lpkg/Class;.method(desc)R", "Lpkg/Class;::method" */
	if (name[0] == 'L' && (semi = strchr(name, ';')) && java_path(name + 1, (size_t)(semi - name - 1), '/')) {
		m = semi[1] == '.' ? semi + 2 : strncmp(semi + 1, "::", 2) == 0 ? semi + 3 : NULL;
		if (!m)
			return 0;
		size_t nm = strcspn(m, "(");
		ps = java_params(m + nm, true);
		if (nm == 0 || ps == (const char *)-1 || !java_path(m, nm, '.'))
			return 0;
		return java_join(name + 1, (size_t)(semi - name - 1), '/', m, nm, ps, params, out);
	}
	/* "pkg.Class::method(desc)R" */
	if ((colons = strstr(name, "::")) && !strstr(colons + 2, "::") &&
	    java_path(name, (size_t)(colons - name), '.') && memchr(name, '.', (size_t)(colons - name))) {
		m = colons + 2;
		size_t nm = strcspn(m, "(");
		ps = java_params(m + nm, true);
		if (nm == 0 || !ps || ps == (const char *)-1 || !java_path(m, nm, '.'))
			return 0;
		return java_join(name, (size_t)(colons - name), '.', m, nm, ps, params, out);
	}
	/* "RetType pkg.Class.method(Type, Type)": HotSpot's map */
	if (n && name[n - 1] == ')' && (paren = strchr(name, '(')) && !strstr(name, "::")) {
		const char *sp = memchr(name, ' ', (size_t)(paren - name));
		const char *start = sp ? sp + 1 : name;
		if (sp) {
			/* the return type: a name, "[]" after it for arrays */
			size_t nt = (size_t)(sp - name);
			while (nt >= 2 && name[nt - 2] == '[' && name[nt - 1] == ']')
				nt -= 2;
			if (!java_path(name, nt, '.'))
				return 0;
		}
		const char *dot = memrchr(start, '.', (size_t)(paren - start));
		if (!dot || !java_path(start, (size_t)(paren - start), '.') || java_params(paren, false) != paren)
			return 0;
		return java_join(start, (size_t)(dot - start), '.', dot + 1, (size_t)(paren - dot - 1), paren,
				 params, out);
	}
	return 0;
}
