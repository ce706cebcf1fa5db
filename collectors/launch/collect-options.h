/* collect-options.h - the launcher's command line
 *
 * collect_parse reads the options into struct collect_opts, with the
 * defaults and limits of collect-env.h, prints --help and --version, and
 * says what is wrong with a usage error.  The rest of the struct (held,
 * output_held, word) is filled in by main before the fork.
 */
#ifndef PROFVIEW_LAUNCH_COLLECT_OPTIONS_H
#define PROFVIEW_LAUNCH_COLLECT_OPTIONS_H

#define COLLECT_ATTACH_MAX 256

struct collect_opts {
	long frequency;
	const char *output;   /* as given, or NULL */
	int quiet;
	int verbose;          /* -v: every process of a run, each as it was */
	int unwind;           /* enum raw_unwind */
	long stack_size;      /* bytes of stack copied per sample, dwarf */
	const char *engine;   /* "auto", "posix" or "perf" */
	const char *clock;    /* "cpu" or "wall" */
	int no_inherit;       /* profile the program's process only */
	double delay;         /* seconds before sampling starts, 0: at once */
	double split;         /* seconds of the run per segment, 0: one trace */
	long keep;            /* segments kept on disk, 0: all */
	int control;          /* the signal that pauses and resumes, 0: none */
	int held;             /* it is blocked until the library takes it */
	int output_held;      /* main created -o and holds it (collect_claim_output) */
	char word[64];        /* the path of the run's control word, or "" */
	double duration;      /* seconds to profile, 0: all of the run */
	int stats;            /* --stats */
	long long rate;       /* collect-heap: mean bytes between samples */
	/* collect-timer -p PID,...: the running processes (at most
	 * COLLECT_ATTACH_MAX), nattach of them; or --all-matching=NAME */
	int attach_pids[COLLECT_ATTACH_MAX];
	int nattach;
	const char *attach_name;
	char **argv;          /* the program and its arguments */
};

/* Parses the command line.  Returns -1 to go on, else an exit status
 * (0 after --help or --version). */
int collect_parse(int argc, char **argv, struct collect_opts *o);

#endif
