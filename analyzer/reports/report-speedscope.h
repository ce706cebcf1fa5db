/* report-speedscope.h - the samples as a speedscope file, in time order
 *
 * speedscope (https://www.speedscope.app) reads JSON of its own
 * (file-format-schema.json there): a table of frames shared by all
 * profiles, then "sampled" profiles, each a list of stacks (indices into
 * the frames, outermost first) with a weight each.  Its "Time Order" view
 * lays the stacks out one after the other in the order given, so a
 * profile per thread with the samples sorted by when they were taken is
 * that thread's timeline.
 *
 * A timed profile (pv_profile.timed) gets one profile per thread with
 * samples; an untimed one a single profile of all samples in the order
 * the profile holds them.  Weights are in what the tree weighs by
 * (calltree.h): nanoseconds of CPU or wall time, else sample counts (unit
 * "none").  Consecutive samples of one profile with the same stack are
 * written once with their weights summed, as speedscope shows them, and
 * samples of no weight are left out, as speedscope ignores them.
 */
#ifndef PROFVIEW_REPORT_SPEEDSCOPE_H
#define PROFVIEW_REPORT_SPEEDSCOPE_H

/* The writer is report_speedscope (report.h): the samples of the tree's
 * profile (at the tree's granularity, weighed as the tree) as JSON titled
 * with the context's title; the base of a comparison is left out. */

#endif
