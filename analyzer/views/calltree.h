/* calltree.h - the call tree (and flat profile) built from a profile
 *
 * Frames are what a tree node stands for at the chosen granularity: a
 * function, a function at one source line, a source file or one address.
 * Every sample is expanded from its outermost frame to its leaf (inlined
 * calls are frames of their own, or with noinlines part of the function
 * they were inlined into) and added along the path.  The tree keeps
 * sample counts and the profile's second value (CPU or wall nanoseconds)
 * per node, cumulative and self.  It holds no view state.
 */
#ifndef PROFVIEW_CALLTREE_H
#define PROFVIEW_CALLTREE_H

#include "names.h"
#include "profile.h"

enum ct_granularity { CT_FUNCTIONS, CT_LINES, CT_FILES, CT_ADDRESSES };

struct ct_frame {
	uint32_t function;     /* function index, PV_NONE for files */
	uint32_t file;         /* string index */
	int64_t line;          /* CT_LINES */
	uint64_t address;      /* CT_ADDRESSES */
	/* A kernel frame (pv_location_is_kernel): kept apart from a user
	 * frame of the same name at every granularity. */
	bool kernel;
};

/* How the text reports and the browser mark a kernel frame: before its
 * name, as perf report's "[k]". */
#define CT_KERNEL_MARK "[k] "
#define CT_KERNEL_MARK_LEN 4

enum ct_node_kind { CT_ROOT, CT_THREAD, CT_FRAME, CT_PROCESS };

/* A node that stands for a thread or a process, not a frame. */
static inline bool ct_is_group(uint32_t kind)
{
	return kind == CT_THREAD || kind == CT_PROCESS;
}

struct ct_node {
	uint32_t kind;         /* enum ct_node_kind */
	uint32_t frame;        /* frame index (CT_FRAME), thread index (CT_THREAD),
				* process index (CT_PROCESS; nprocesses: none) */
	uint32_t parent;       /* PV_NONE for the root */
	uint32_t first_child, next_sibling; /* PV_NONE terminated, by count */
	uint32_t nchildren;
	uint32_t depth;        /* root 0 */
	int64_t count, value;  /* cumulative */
	int64_t self_count, self_value;
	/* The variance of the node's weight (ct_weight), cumulative and
	 * self: the sum of its samples' (pv_sample_var); its standard error
	 * is the square root. */
	double sq, self_sq;
};

/* A comparison (pv_profile.diff): a node's base side, with the variance
 * of its weight (ct_node.sq), what the significance test needs (diff.h).
 * The node itself holds the new side. */
struct ct_diff_node {
	int64_t count, value, self_count, self_value; /* the base's */
	double base_sq, base_self_sq;
};

struct ct_options {
	enum ct_granularity granularity;
	/* What the tree weighs nodes by, as pprof's -sample_index: a sample
	 * type's name ("cpu", "samples"...) or its index; NULL for the
	 * profile's time value when it has one (CPU time for a collect-timer
	 * trace), else the sample count. */
	const char *sample_index;
	bool by_thread;        /* a level of thread nodes under the root */
	/* A level of process nodes under the root (over the threads' with
	 * by_thread). */
	bool by_process;
	/* Inlined calls are not frames: a location is the function it is
	 * in (its last line, at that line), as pprof's -noinlines and as
	 * perf names a symbol. */
	bool noinlines;
	/* The profile's stacks are upside down (pv_reverse_stacks): a
	 * location's lines are outermost first. */
	bool reversed;
	/* Functions are named whole ("ns::Klass<int>::method(int) const"),
	 * not as names.h shortens them. */
	bool full_names;
	/* Recursion folded: a frame already on the stack below (it called
	 * itself, directly or through others) takes the stack back to its
	 * first place there, the frames between dropped ("a;b;a;b;c" is
	 * "a;b;c", "a;b;a" is "a"), so that each frame is on a stack once.
	 * The leaf stays the leaf; with it, calltree_expand() folds too. */
	bool fold_recursion;
	const uint32_t *tids;  /* keep only these threads (NULL: all) */
	size_t ntids;
	/* Only the distinct stacks and the root's totals, no nodes below the
	 * root: enough for calltree_flat() and the call graph (graph.h),
	 * which then work from the stacks. */
	bool paths_only;
};

/* A distinct stack of the tree's samples, as frames outermost first: the
 * samples of one stored stack (and thread, by thread), counted once. */
struct ct_path {
	uint32_t loc_off, nlocs, thread;
	uint32_t len;          /* frames */
	bool base;             /* a comparison's base samples */
	size_t off;            /* into calltree.path_frames */
	int64_t count, value;
	double sq;             /* the variance of its weight (ct_node.sq) */
};

struct calltree {
	const struct pv_profile *p;
	enum ct_granularity granularity;
	bool noinlines, reversed;
	bool fold_recursion;   /* ct_options.fold_recursion */
	/* Split by process, by thread (ct_options): with paths_only, a
	 * path's thread is its thread index with by_thread, else its process
	 * index with by_process (p->nprocesses: none), else 0. */
	bool by_process, by_thread;
	struct names *names;   /* the functions' names shown; NULL: whole */
	struct ct_frame *frames; size_t nframes, cap_frames;
	struct ct_node *nodes; size_t nnodes, cap_nodes;
	uint32_t v_count, v_value; /* value indices in the profile, PV_NONE if absent */
	int64_t samples;       /* samples in the tree (after --tid) */
	/* With paths_only: the distinct stacks, and nodes holds the root alone. */
	bool paths_only;
	struct ct_path *paths; size_t npaths;
	uint32_t *path_frames;
	/* A comparison: per node, the base and the test's sums (NULL when the
	 * profile is not one). */
	struct ct_diff_node *dn;
	/* The total the weights share out, when it is known exactly (the
	 * threads' CPU time of a profile whose cpu_exact is set, weighed by
	 * CPU time); 0 when not.  See ct_var. */
	int64_t exact_total;
	/* Has the tree a kernel frame (ct_frame.kernel)? */
	bool kernel_frames;

	/* private */
	uint32_t *frame_slots; size_t nframe_slots;
	uint32_t *loc_frames;  /* per location: offset of its frames in lf, or PV_NONE */
	uint32_t *lf; size_t nlf, cap_lf;
	uint32_t *scratch; size_t nscratch, cap_scratch;
	uint32_t *fold_at; size_t cap_fold_at; /* per frame: its place in a stack folded */
};

/* What shares and order are measured in, the same in every report: the
 * time value (v_value) when the tree has one, else the sample count.  A
 * sample's CPU time is right even where the timers under-sample a thread
 * (raw-cpu.h), so it is the default. */
static inline int64_t ct_pick(const struct calltree *t, int64_t count, int64_t value)
{
	return t->v_value != PV_NONE ? value : count;
}
static inline int64_t ct_weight(const struct calltree *t, const struct ct_node *n)
{
	return ct_pick(t, n->count, n->value);
}
/* Sample s's count (its "samples" value, else 1) and what it weighs in
 * the tree (ct_pick). */
static inline int64_t ct_sample_count(const struct calltree *t, const struct pv_sample *s)
{
	return t->v_count != PV_NONE ? s->values[t->v_count] : 1;
}
static inline int64_t ct_sample_weight(const struct calltree *t, const struct pv_sample *s)
{
	return ct_pick(t, ct_sample_count(t, s), t->v_value != PV_NONE ? s->values[t->v_value] : 0);
}
/* Node i's sample count, in a comparison the larger side's: what the
 * reports prune by. */
static inline int64_t ct_node_n(const struct calltree *t, uint32_t i)
{
	int64_t n = t->nodes[i].count;

	if (t->dn && t->dn[i].count > n)
		n = t->dn[i].count;
	return n;
}
/* A comparison's base weight of node i (0 when the tree is not one). */
static inline int64_t ct_base_weight(const struct calltree *t, uint32_t i)
{
	return t->dn ? ct_pick(t, t->dn[i].count, t->dn[i].value) : 0;
}

/* The noise floor every report dims or hides by: is a node of weight w
 * within the noise of its parent's samples, w <= k sqrt(parent_sq), the
 * sum of their variances (not ct_var's: a parent that holds a whole
 * thread's exact CPU time hides no less)?  (With samples of one weight, a
 * node of n samples under a parent of N: n <= k sqrt(N).)  Never when
 * k <= 0. */
bool ct_below_floor(int64_t w, double parent_sq, double k);
/* The variance of a weight w whose samples' variances add up to sq: sq,
 * or, when the tree's total is known exactly (exact_total), sq (1 - w /
 * total): the samples then share out a fixed total, and a node's part of
 * it is a binomial count, (1 - share) times as variable as a Poisson one
 * (by thread, and the share of all threads is never more than a thread's:
 * on the safe side). */
double ct_var(const struct calltree *t, int64_t w, double sq);
/* A node's standard error in samples, as the ± column beside its sample
 * count n shows it: that of its weight w (variance sq) relative to w,
 * times n; sqrt(sq) when the tree weighs by samples. */
double ct_noise_samples(const struct calltree *t, int64_t n, int64_t w, double sq);
/* Is node i below the floor k (ct_below_floor) against its parent?  In
 * a comparison by the larger side's weight, against the larger side's
 * variance of the parent.  The root never is. */
bool ct_node_below_floor(const struct calltree *t, uint32_t i, double k);
static inline double ct_node_noise(const struct calltree *t, const struct ct_node *nd)
{
	return ct_noise_samples(t, nd->count, ct_weight(t, nd), nd->sq);
}

/* "[process PID "name"]", with the programs it ran before
 * (", first env, bash"), of process index process, into buf. */
const char *calltree_process_name(const struct calltree *t, uint32_t process, char *buf, size_t n);
/* The name of a node, the same in every report: a frame's
 * (calltree_frame_name), "[thread TID "name"]" (or "[thread TID]",
 * "[unknown thread]" for samples with none), "[all]" for the root. */
const char *calltree_node_name(const struct calltree *t, uint32_t node, char *buf, size_t n);

/* The name of what the tree weighs nodes by: the time value's type
 * ("cpu", "wall") or "samples". */
const char *calltree_weight_name(const struct calltree *t);

/* The unit of the value the tree weighs by: none (it weighs by sample
 * counts), a time, a size, or a count that is no sample count (a heap
 * profile's estimated objects). */
enum ct_unit { CT_UNIT_SAMPLES, CT_UNIT_NS, CT_UNIT_BYTES, CT_UNIT_COUNT };
enum ct_unit calltree_value_unit(const struct calltree *t);
/* The reports' value columns: what a value is divided by (1e6 for
 * nanoseconds in milliseconds, 1024 for bytes in KiB, 1) and the
 * column's unit ("ms", "KiB", "n"). */
double ct_value_div(const struct calltree *t);
const char *ct_value_col(const struct calltree *t);
/* A value for people, in its unit: "12.5 ms", "3.2 MiB", "1234". */
const char *calltree_value_str(const struct calltree *t, int64_t v, char *buf, size_t n);
/* The same without spaces, as the call graph shows them: "12.50ms",
 * "3.20MiB". */
const char *calltree_value_compact(const struct calltree *t, int64_t v, char *buf, size_t n);

/* Build the tree; NULL after an error (an unknown sample_index among
 * them).  The profile must stay alive and
 * unchanged while the tree is used. */
struct calltree *calltree_build(const struct pv_profile *p, const struct ct_options *opt);
void calltree_free(struct calltree *t);

/* A new tree of node's subtree: the node and all below it, under a root
 * with the node's totals (and sample count), as if the profile held only
 * the samples through it; the frames are copied, the profile shared.
 * calltree_free() frees it.  NULL after an error. */
struct calltree *calltree_subtree(const struct calltree *t, uint32_t node);

/* Frames of sample s, outermost first, into *out (owned by the tree, valid
 * until the next call); returns how many, or -1 when out of memory. */
int calltree_expand(struct calltree *t, const struct pv_sample *s, const uint32_t **out);

/* Display name of a frame ("main", "main:42", "demo.c") and its location
 * ("demo.c:42", may be "") into buf.  A C++ function is named short
 * (names.h) unless the tree has full_names; calltree_frame_full_name()
 * names it whole in any case (for a tooltip). */
const char *calltree_frame_name(const struct calltree *t, uint32_t frame, char *buf, size_t n);
const char *calltree_frame_full_name(const struct calltree *t, uint32_t frame, char *buf, size_t n);
/* The name of the function as a frame shows it, short or whole (""
 * for none); borrowed from the tree or the profile. */
const char *calltree_function_name(const struct calltree *t, uint32_t function);
const char *calltree_frame_where(const struct calltree *t, uint32_t frame, char *buf, size_t n);
/* The same location in parts: the source file ("" when unknown; borrowed
 * from the profile) and its line in *line (0 when unknown). */
const char *calltree_frame_file(const struct calltree *t, uint32_t frame, int64_t *line);

/* Is frame a kernel frame?  Is node one (a CT_FRAME node of one)? */
static inline bool calltree_frame_is_kernel(const struct calltree *t, uint32_t frame)
{
	return frame < t->nframes && t->frames[frame].kernel;
}
static inline bool calltree_node_is_kernel(const struct calltree *t, uint32_t node)
{
	return t->nodes[node].kind == CT_FRAME && calltree_frame_is_kernel(t, t->nodes[node].frame);
}

/* One row per frame for the flat view. */
struct ct_flat_row {
	uint32_t frame;
	int64_t self_count, self_value, cum_count, cum_value;
	/* a comparison's base, and the test's sums (ct_diff_node) */
	int64_t base_self_count, base_self_value, base_cum_count, base_cum_value;
	double self_sq, cum_sq, base_self_sq, base_cum_sq;
};
/* Rows of every frame seen, unsorted; *n gets how many.  NULL on error. */
struct ct_flat_row *calltree_flat(struct calltree *t, size_t *n);
static inline int64_t ct_base_self_weight(const struct calltree *t, const struct ct_flat_row *r)
{
	return ct_pick(t, r->base_self_count, r->base_self_value);
}
static inline int64_t ct_base_cum_weight(const struct calltree *t, const struct ct_flat_row *r)
{
	return ct_pick(t, r->base_cum_count, r->base_cum_value);
}
static inline int64_t ct_self_weight(const struct calltree *t, const struct ct_flat_row *r)
{
	return ct_pick(t, r->self_count, r->self_value);
}
static inline int64_t ct_cum_weight(const struct calltree *t, const struct ct_flat_row *r)
{
	return ct_pick(t, r->cum_count, r->cum_value);
}

/* Is thread index th selected by the options? */
bool calltree_thread_selected(const struct pv_profile *p, const struct ct_options *opt, uint32_t th);

#endif
