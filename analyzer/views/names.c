/* names.c - the names reports give functions: C++ names made short (see
 * names.h)
 *
 * The demangler's output is read as a sequence of tokens at the outer
 * level: names and "::", operator names, and bracketed groups -- template
 * arguments <...>, parameter lists (...), lambdas and other unnamed
 * entities {...}, ABI tags [abi:...].  A group is matched to its end with
 * the brackets inside it counted, "<" and ">" only where they can open
 * template arguments (not inside parentheses, where they are comparisons)
 * and never in an operator's name ("operator<", "operator->").  A space at
 * the outer level of a name with a parameter list ends a return type: the
 * name starts again after it.  A name that cannot be read this way (its
 * brackets do not match) is shown whole.
 */
#include "names.h"
#include "error.h"
#include "javaname.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

#define NAMES_WHOLE UINT32_MAX /* shown as the profile has it */
#define GROUP_DEPTH 256        /* nesting of brackets read */

static bool ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
	       c == '$';
}

static bool starts(const char *s, size_t n, size_t i, const char *word)
{
	size_t len = strlen(word);

	return n - i >= len && memcmp(s + i, word, len) == 0;
}

/* The length of the operator's name at s[i]: "operator" and what follows
 * it ("()", "<<=", " new[]", "\"\" _km"); 8 for a conversion operator,
 * whose type follows; 0 when no operator starts there. */
static size_t operator_len(const char *s, size_t n, size_t i)
{
	/* longest first */
	static const char *const ops[] = {
		"<=>", "<<=", ">>=", "->*", "()", "[]", "<<", ">>", "<=", ">=", "->", "==", "!=", "&&",
		"||", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "+", "-", "*", "/",
		"%", "&", "|", "^", "~", "!", "=", "<", ">", ",",
	};
	size_t k = i + 8;

	if (!starts(s, n, i, "operator") || (i > 0 && ident(s[i - 1])) || (k < n && ident(s[k])))
		return 0;
	if (starts(s, n, k, "\"\"")) {
		/* a literal operator: operator"" _km */
		k += 2;
		if (k < n && s[k] == ' ')
			k++;
		while (k < n && ident(s[k]))
			k++;
		return k - i;
	}
	for (size_t j = 0; j < sizeof ops / sizeof *ops; j++)
		if (starts(s, n, k, ops[j]))
			return 8 + strlen(ops[j]);
	if (starts(s, n, k, " new") || starts(s, n, k, " delete")) {
		size_t w = s[k + 1] == 'n' ? 4 : 7;
		if (k + w >= n || !ident(s[k + w])) {
			k += w;
			if (starts(s, n, k, "[]"))
				k += 2;
			return k - i;
		}
	}
	return 8;
}

/* The end (the index after it) of the bracketed group that opens at s[i],
 * or 0 when it does not close before n. */
static size_t group_end(const char *s, size_t n, size_t i)
{
	char stack[GROUP_DEPTH];
	size_t sp = 0;

	for (size_t k = i; k < n; k++) {
		size_t op = operator_len(s, n, k);
		char c = s[k], top = sp ? stack[sp - 1] : 0;

		if (op) {
			k += op - 1;
			continue;
		}
		switch (c) {
		case '<':
			/* template arguments, not a comparison in parentheses */
			if (sp && top != '<')
				break;
			/* fall through */
		case '(':
		case '[':
		case '{':
			if (sp == GROUP_DEPTH)
				return 0;
			stack[sp++] = c;
			break;
		case '>':
			if (top != '<')
				break;
			if (--sp == 0)
				return k + 1;
			break;
		case ')':
		case ']':
		case '}':
			if (top != (c == ')' ? '(' : c == ']' ? '[' : '{'))
				return 0;
			if (--sp == 0)
				return k + 1;
			break;
		default:
			break;
		}
	}
	return 0;
}

/* After a parameter list ending before s[i]: the end of the qualifiers
 * that follow it (" const", " &&", " noexcept", " throw()"...). */
static size_t quals_end(const char *s, size_t n, size_t i)
{
	static const char *const quals[] = {
		" const", " volatile", " __restrict", " restrict", " &&", " &", " noexcept",
		" transaction_safe", " throw",
	};

	for (;;) {
		size_t j, len = 0;
		for (j = 0; j < sizeof quals / sizeof *quals; j++) {
			len = strlen(quals[j]);
			if (starts(s, n, i, quals[j]) && (i + len >= n || !ident(s[i + len])))
				break;
		}
		if (j == sizeof quals / sizeof *quals)
			return i;
		i += len;
		if (i < n && s[i] == '(') {
			/* noexcept(...), throw(...) */
			size_t e = group_end(s, n, i);
			if (!e)
				return i;
			i = e;
		}
	}
}

/* Where the name's own parameter list opens: the group of parentheses at
 * the outer level followed by nothing but qualifiers; n when there is
 * none. */
static size_t own_params(const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t op = operator_len(s, n, i), e;

		if (op) {
			i += op;
			continue;
		}
		if (starts(s, n, i, "(anonymous namespace)")) {
			i += 21;
			continue;
		}
		if (s[i] != '(' && s[i] != '<' && s[i] != '{' && s[i] != '[') {
			i++;
			continue;
		}
		if (!(e = group_end(s, n, i)))
			return n;
		if (s[i] == '(' && quals_end(s, n, e) == n)
			return i;
		i = e;
	}
	return n;
}

struct shortener {
	const char *s;
	enum names_form form;
	bool has_params;       /* spaces at the outer level end a return type */
	size_t own;            /* where the own parameter list opens in s */
	struct pv_strbuf out;
	size_t mark;           /* where the name starts in out (after a prefix) */
};

static bool scan(struct shortener *x, size_t from, size_t to, bool outer);

/* Is the output at the start of a name, where "<" opens a qualified path
 * ("<T as Trait>::f", Rust's) rather than template arguments? */
static bool at_name_start(const struct shortener *x)
{
	char c = x->out.len > x->mark ? x->out.s[x->out.len - 1] : 0;

	return !c || c == ':' || c == '(' || c == ',' || c == ' ' || c == '<';
}

/* The operator's name at s[i] (op bytes), then its template arguments
 * ("operator< <int>") or, for a conversion operator, its type, up to the
 * parameter list.  Returns where it ends, 0 when it cannot be read. */
static size_t scan_operator(struct shortener *x, size_t i, size_t to, size_t op, bool outer)
{
	const char *s = x->s;

	pv_strbuf_add(&x->out, s + i, op);
	i += op;
	if (op == 8 && i < to && s[i] == ' ') {
		/* "operator unsigned long", "operator std::vector<int>",
		 * "operator void (Klass::*)()": to the parameter list */
		size_t k = i + 1;
		if (outer && x->has_params && x->own > k && x->own <= to)
			k = x->own;
		while (k < to && s[k] != '(') {
			size_t e = s[k] == '<' || s[k] == '[' || s[k] == '{' ? group_end(s, to, k) : k + 1;
			if (!e)
				return 0;
			k = e;
		}
		pv_strbuf_putc(&x->out, ' ');
		if (!scan(x, i + 1, k, false))
			return 0;
		return k;
	}
	if (op > 8 && i + 1 < to && s[i] == ' ' && s[i + 1] == '<') {
		size_t e = group_end(s, to, i + 1);
		if (!e)
			return 0;
		if (x->form == NAMES_TEMPLATES)
			pv_strbuf_add(&x->out, s + i, e - i);
		i = e;
	}
	return i;
}

/* s[from, to) in x's form into x->out: at the outer level of the name, or
 * inside a parameter list, a lambda's braces or a qualified path (outer
 * false: spaces and parentheses are kept).  false when it cannot be read. */
static bool scan(struct shortener *x, size_t from, size_t to, bool outer)
{
	const char *s = x->s;
	size_t i = from, e;

	while (i < to) {
		size_t op = operator_len(s, to, i);

		if (op) {
			if (!(i = scan_operator(x, i, to, op, outer)))
				return false;
			continue;
		}
		switch (s[i]) {
		case '<':
			if (!(e = group_end(s, to, i)))
				return false;
			if (at_name_start(x)) {
				pv_strbuf_putc(&x->out, '<');
				if (!scan(x, i + 1, e - 1, false))
					return false;
				pv_strbuf_putc(&x->out, '>');
			} else if (x->form == NAMES_TEMPLATES) {
				pv_strbuf_add(&x->out, s + i, e - i);
			}
			i = e;
			break;
		case '(':
			if (starts(s, to, i, "(anonymous namespace)")) {
				pv_strbuf_add(&x->out, s + i, 21);
				i += 21;
				break;
			}
			if (!(e = group_end(s, to, i)))
				return false;
			if (!outer) {
				pv_strbuf_putc(&x->out, '(');
				if (!scan(x, i + 1, e - 1, false))
					return false;
				pv_strbuf_putc(&x->out, ')');
				i = e;
				break;
			}
			/* A parameter list: the function's own (then the
			 * qualifiers after it end the name) or that of a
			 * function the name is local to. */
			size_t q = quals_end(s, to, e);
			if (q == to && x->out.len == x->mark)
				return false; /* no name before it */
			if (q == to && x->form == NAMES_PARAMS) {
				pv_strbuf_putc(&x->out, '(');
				if (!scan(x, i + 1, e - 1, false))
					return false;
				pv_strbuf_putc(&x->out, ')');
				pv_strbuf_add(&x->out, s + e, q - e);
			}
			i = q;
			break;
		case '{':
			/* {lambda(int)#1}, {unnamed type#1} */
			if (!(e = group_end(s, to, i)))
				return false;
			pv_strbuf_putc(&x->out, '{');
			if (!scan(x, i + 1, e - 1, false))
				return false;
			pv_strbuf_putc(&x->out, '}');
			i = e;
			break;
		case '[':
			if (starts(s, to, i, "[abi:")) {
				if (!(e = group_end(s, to, i)))
					return false;
				i = e;
				break;
			}
			pv_strbuf_putc(&x->out, s[i++]);
			break;
		case ' ':
			if (outer && x->has_params) {
				/* what came before was a return type */
				x->out.len = x->mark;
				i++;
				break;
			}
			pv_strbuf_putc(&x->out, s[i++]);
			break;
		case ')':
		case '>':
		case ']':
		case '}':
			if (outer)
				return false;
			pv_strbuf_putc(&x->out, s[i++]);
			break;
		default:
			pv_strbuf_putc(&x->out, s[i++]);
		}
	}
	return true;
}

/* Special names the demangler writes before a function's: kept. */
static const char *const prefixes[] = {
	"non-virtual thunk to ", "virtual thunk to ", "covariant return thunk to ",
	"transaction clone for ", "non-transaction clone for ", "TLS init function for ",
	"TLS wrapper function for ", "hidden alias for ",
};

/* A name longer than NAMES_MAX_SHOWN: its first bytes, to a character,
 * and "...". */
static char *cut_name(const char *name)
{
	size_t n = NAMES_MAX_SHOWN;
	char *s;

	while (n > 0 && ((unsigned char)name[n] & 0xc0) == 0x80)
		n--;
	if (!(s = malloc(n + 4))) {
		pv_oom();
		return NULL;
	}
	memcpy(s, name, n);
	memcpy(s + n, "...", 4);
	return s;
}

char *names_shorten(const char *name, enum names_form form)
{
	struct shortener x = { .s = name, .form = form };
	size_t n = strnlen(name, NAMES_MAX_SHOWN + 1), core = n, vend = n, start = 0, at, own, clone_len = 0;
	const char *clone;
	bool plt = false;
	char *java;
	int is_java;

	if (n > NAMES_MAX_SHOWN)
		return cut_name(name);
	is_java = javaname_shorten(name, form == NAMES_PARAMS, &java);
	if (is_java)
		return is_java > 0 ? java : NULL;

	/* A symbol version ("@@GLIBCXX_3.4") is dropped, a PLT stub's "@plt"
	 * kept. */
	for (at = n; at > 0 && name[at - 1] != '@'; at--)
		if (strchr(" ()<>[]{}", name[at - 1]))
			break;
	if (at > 0 && name[at - 1] == '@') {
		while (at > 1 && name[at - 2] == '@')
			at--;
		plt = strcmp(name + at - 1, "@plt") == 0;
		core = vend = at - 1;
	}
	/* gcc's clones of a function: " [clone .cold]", kept. */
	clone = strstr(name, " [clone ");
	if (clone && (size_t)(clone - name) < core) {
		core = (size_t)(clone - name);
		clone_len = vend - core;
	}
	for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
		if (starts(name, core, 0, prefixes[i])) {
			start = strlen(prefixes[i]);
			pv_strbuf_add(&x.out, name, start);
			x.mark = x.out.len;
			break;
		}
	own = own_params(name + start, core - start);
	x.has_params = own < core - start;
	x.own = start + own;
	/* Only what looks like C++: "::", or a parameter list right after a
	 * name ("f(int)", not "f (file.py:3)" or Go's "main.(*T).M"). */
	if (x.has_params ? own == 0 || name[start + own - 1] == ' ' || name[start + own - 1] == '.'
			 : !memmem(name + start, core - start, "::", 2))
		goto whole;
	if (!scan(&x, start, core, true) || x.out.len == x.mark)
		goto whole;
	pv_strbuf_add(&x.out, name + core, clone_len);
	if (plt)
		pv_strbuf_add(&x.out, "@plt", 4);
	if (x.out.failed)
		goto oom;
	return x.out.s;
whole:
	free(x.out.s);
	if (!(x.out.s = strdup(name)))
		goto oom_free;
	return x.out.s;
oom:
	free(x.out.s);
oom_free:
	pv_oom();
	return NULL;
}

/* ---- the names of a profile's functions -------------------------------- */

struct names {
	size_t n;              /* functions */
	uint32_t *off;         /* per function: its name in pool, or NAMES_WHOLE */
	char *pool;
	size_t len, cap;
};

/* s added to the pool: its offset, or NAMES_WHOLE when out of memory
 * (reported). */
static uint32_t pool_add(struct names *nm, const char *s)
{
	size_t len = strlen(s) + 1;
	uint32_t off;

	if (nm->len + len >= NAMES_WHOLE - 2) {
		pv_oom();
		return NAMES_WHOLE;
	}
	if (pv_grow(&nm->pool, &nm->cap, nm->len + len, 1) < 0)
		return NAMES_WHOLE;
	memcpy(nm->pool + nm->len, s, len);
	off = (uint32_t)nm->len;
	nm->len += len;
	return off;
}

const char *names_get(const struct names *nm, const struct pv_profile *p, uint32_t fn)
{
	if (fn >= p->nfunctions)
		return "";
	if (!nm || fn >= nm->n || nm->off[fn] == NAMES_WHOLE)
		return pv_str(p, p->functions[fn].name);
	return nm->pool + nm->off[fn];
}

struct sorting {
	const struct names *nm;
	const struct pv_profile *p;
};

/* By the name shown, then by the whole name (its string index: the same
 * name is the same index). */
static int cmp_shown(const void *a, const void *b, void *ctx)
{
	const struct sorting *st = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = strcmp(names_get(st->nm, st->p, x), names_get(st->nm, st->p, y));
	uint32_t nx = st->p->functions[x].name, ny = st->p->functions[y].name;

	if (c)
		return c;
	return nx < ny ? -1 : nx > ny;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The k names forms[0..k) all differ?  (They are sorted.) */
static bool all_differ(char **forms, size_t k)
{
	qsort(forms, k, sizeof *forms, cmp_str);
	for (size_t i = 1; i < k; i++)
		if (strcmp(forms[i - 1], forms[i]) == 0)
			return false;
	return true;
}

/* Functions fns[0..k), whose short names are the same and whose k_names >
 * 1 names are not: shown with their parameter lists or template
 * arguments, whichever tells them apart in fewer characters, else whole.
 * 0, or -1 when out of memory. */
static int tell_apart(struct names *nm, const struct pv_profile *p, const uint32_t *fns, size_t k,
		      size_t k_names)
{
	static const enum names_form tries[] = { NAMES_PARAMS, NAMES_TEMPLATES };
	char **forms[2] = { pv_budget_calloc(k_names, sizeof(char *)),
			    pv_budget_calloc(k_names, sizeof(char *)) };
	char **sorted = pv_budget_calloc(k_names, sizeof(char *));
	size_t total[2] = { 0, 0 };
	int best = -1, ret = -1;

	if (!forms[0] || !forms[1] || !sorted) {
		pv_oom();
		goto out;
	}
	for (int t = 0; t < 2; t++) {
		size_t j = 0;
		for (size_t i = 0; i < k; i++) {
			if (i && p->functions[fns[i]].name == p->functions[fns[i - 1]].name)
				continue;
			if (!(forms[t][j] = names_shorten(pv_str(p, p->functions[fns[i]].name), tries[t])))
				goto out;
			total[t] += strlen(forms[t][j++]);
		}
		memcpy(sorted, forms[t], k_names * sizeof *sorted);
		if (all_differ(sorted, k_names) && (best < 0 || total[t] < total[best]))
			best = t;
	}
	for (size_t i = 0, j = 0; i < k; i++) {
		if (i && p->functions[fns[i]].name != p->functions[fns[i - 1]].name)
			j++;
		if (best < 0) {
			nm->off[fns[i]] = NAMES_WHOLE;
		} else if (!i || p->functions[fns[i]].name != p->functions[fns[i - 1]].name) {
			if ((nm->off[fns[i]] = pool_add(nm, forms[best][j])) == NAMES_WHOLE)
				goto out;
		} else {
			nm->off[fns[i]] = nm->off[fns[i - 1]];
		}
	}
	ret = 0;
out:
	for (int t = 0; t < 2; t++)
		for (size_t j = 0; forms[t] && j < k_names; j++)
			free(forms[t][j]);
	free(forms[0]);
	free(forms[1]);
	free(sorted);
	return ret;
}

struct names *names_new(const struct pv_profile *p)
{
	struct names *nm = calloc(1, sizeof *nm);
	uint32_t *memo = NULL, *order = NULL;
	struct sorting st = { nm, p };

	if (!nm)
		goto oom;
	nm->n = p->nfunctions;
	nm->off = pv_budget_calloc(nm->n ? nm->n : 1, sizeof *nm->off);
	memo = calloc(p->strings.n + 1, sizeof *memo); /* per name: 1 whole, else offset + 2 */
	order = malloc((nm->n ? nm->n : 1) * sizeof *order);
	if (!nm->off || !memo || !order)
		goto oom;
	/* Each name's short form, once per name. */
	for (size_t i = 0; i < nm->n; i++) {
		uint32_t s = p->functions[i].name;
		const char *full = pv_str(p, s);
		order[i] = (uint32_t)i;
		if (s < p->strings.n && memo[s]) {
			nm->off[i] = memo[s] == 1 ? NAMES_WHOLE : memo[s] - 2;
			continue;
		}
		char *sh = names_shorten(full, NAMES_SHORT);
		if (!sh)
			goto fail;
		if (strcmp(sh, full) == 0) {
			nm->off[i] = NAMES_WHOLE;
		} else if ((nm->off[i] = pool_add(nm, sh)) == NAMES_WHOLE) {
			free(sh);
			goto fail;
		}
		free(sh);
		if (s < p->strings.n)
			memo[s] = nm->off[i] == NAMES_WHOLE ? 1 : nm->off[i] + 2;
	}
	/* Groups of one short name and several names, told apart. */
	qsort_r(order, nm->n, sizeof *order, cmp_shown, &st);
	for (size_t i = 0; i < nm->n;) {
		size_t j = i + 1, k_names = 1;
		const char *shown = names_get(nm, p, order[i]);
		for (; j < nm->n && strcmp(names_get(nm, p, order[j]), shown) == 0; j++)
			k_names += p->functions[order[j]].name != p->functions[order[j - 1]].name;
		if (k_names > 1 && tell_apart(nm, p, order + i, j - i, k_names) < 0)
			goto fail;
		i = j;
	}
	free(memo);
	free(order);
	return nm;
oom:
	pv_oom();
fail:
	free(memo);
	free(order);
	names_free(nm);
	return NULL;
}

struct names *names_copy(const struct names *src)
{
	struct names *nm = calloc(1, sizeof *nm);

	if (!nm)
		goto oom;
	nm->n = src->n;
	nm->off = pv_budget_calloc(src->n ? src->n : 1, sizeof *nm->off);
	nm->pool = pv_budget_calloc(src->len ? src->len : 1, 1);
	if (!nm->off || !nm->pool)
		goto oom;
	/* (an empty table has no arrays) */
	if (src->n)
		memcpy(nm->off, src->off, src->n * sizeof *nm->off);
	if (src->len)
		memcpy(nm->pool, src->pool, src->len);
	nm->len = nm->cap = src->len;
	return nm;
oom:
	names_free(nm);
	pv_oom();
	return NULL;
}

void names_free(struct names *nm)
{
	if (!nm)
		return;
	free(nm->off);
	free(nm->pool);
	free(nm);
}
