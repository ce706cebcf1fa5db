/* test-kresume.c - which kernel samples of a collect-timer trace are a
 * return to user mode that rescheduled, charged to their user frames: the
 * switch back in under the return from an interrupt or a system call, or
 * that return alone; and which stay in the kernel: a system call
 * preempted in its work (cond_resched, an interrupt's return to kernel
 * code), a signal's delivery on the way out, an interrupt's softirqs, a
 * kernel thread; and that another profiler's samples are left alone. */
#include "check.h"
#include "error.h"
#include "kresume.h"
#include "merge.h"
#include "profile.h"

#include <string.h>

static void quiet_sink(enum pv_level level, const char *msg)
{
	(void)level;
	(void)msg;
}

/* The kernel stacks, leaf first, each above the user frames "read",
 * "main" (but the kernel thread's); and whether each is charged to them. */
static const struct {
	const char *frames[10];
	int user;       /* has the user frames */
	int moved;
} stacks[] = {
	{ { "finish_task_switch.isra.0", "__schedule", "schedule", "irqentry_exit_to_user_mode",
	    "asm_sysvec_apic_timer_interrupt" }, 1, 1 },
	{ { "irqentry_exit_to_user_mode", "asm_sysvec_reschedule_ipi" }, 1, 1 },
	{ { "finish_task_switch.isra.0", "__schedule", "schedule", "exit_to_user_mode_loop",
	    "do_syscall_64", "entry_SYSCALL_64_after_hwframe" }, 1, 1 },
	{ { "__get_user_8", "__rseq_handle_notify_resume", "exit_to_user_mode_loop", "do_syscall_64",
	    "entry_SYSCALL_64_after_hwframe" }, 1, 1 },
	/* the system call's own work, preempted */
	{ { "finish_task_switch.isra.0", "__schedule", "__cond_resched", "read_zero", "vfs_read",
	    "ksys_read", "do_syscall_64", "entry_SYSCALL_64_after_hwframe" }, 1, 0 },
	{ { "finish_task_switch.isra.0", "__schedule", "preempt_schedule_irq", "irqentry_exit",
	    "asm_sysvec_apic_timer_interrupt", "read_zero", "vfs_read", "do_syscall_64",
	    "entry_SYSCALL_64_after_hwframe" }, 1, 0 },
	{ { "read_zero", "vfs_read", "ksys_read", "do_syscall_64", "entry_SYSCALL_64_after_hwframe" }, 1, 0 },
	/* a signal delivered on the way out */
	{ { "copy_fpstate_to_sigframe", "arch_do_signal_or_restart", "exit_to_user_mode_loop",
	    "irqentry_exit_to_user_mode", "asm_sysvec_apic_timer_interrupt" }, 1, 0 },
	{ { "handle_softirqs", "__irq_exit_rcu", "sysvec_apic_timer_interrupt",
	    "asm_sysvec_apic_timer_interrupt" }, 1, 0 },
	/* nothing to charge it to */
	{ { "finish_task_switch.isra.0", "__schedule", "schedule", "irqentry_exit_to_user_mode" }, 0, 0 },
};
#define NSTACKS (sizeof stacks / sizeof stacks[0])

static uint32_t location_of(struct pv_profile *p, const char *name, uint32_t map, uint64_t addr)
{
	uint32_t n = pv_intern_str(p, name), loc = pv_get_location(p, addr, map);
	struct pv_line l = { pv_get_function(p, n, n, 0, 0), 0 };

	pv_set_lines(p, loc, &l, 1);
	return loc;
}

/* p with the stacks, each a sample of CPU time 1 ms + its index (ns) */
static struct pv_profile *profile_of(int sampler)
{
	struct pv_profile *p = pv_profile_new();
	uint32_t kmap, read, main_, locs[16];

	CHECK(p != NULL);
	if (!p)
		return NULL;
	p->sampler = sampler;
	pv_add_value_type(p, "samples", "count");
	pv_add_value_type(p, "cpu", "nanoseconds");
	kmap = pv_kernel_mapping(p);
	read = location_of(p, "read", PV_NONE, 0x1000);
	main_ = location_of(p, "main", PV_NONE, 0x2000);
	p->system_cpu_ns = 0;
	for (size_t i = 0; i < NSTACKS; i++) {
		struct pv_sample s = { .thread = PV_NONE, .flags = PV_SAMPLE_KERNEL };
		uint32_t n = 0;

		for (; n < 10 && stacks[i].frames[n]; n++)
			locs[n] = location_of(p, stacks[i].frames[n], kmap,
					      0xffffffff81000000ull + 0x1000 * i + 0x10 * n);
		if (stacks[i].user) {
			locs[n++] = read;
			locs[n++] = main_;
		}
		s.loc_off = pv_add_stack(p, locs, n);
		s.nlocs = n;
		s.values[0] = 1;
		s.values[1] = 1000000 + (int64_t)i;
		p->system_cpu_ns += s.values[1];
		CHECK(pv_add_sample(p, &s) == 0);
	}
	return p;
}

static void test_charged(void)
{
	struct pv_profile *p = profile_of(PV_SAMPLER_PERF);
	int64_t system = 0;
	long moved = 0;

	if (!p)
		return;
	for (size_t i = 0; i < NSTACKS; i++) {
		moved += stacks[i].moved;
		system += stacks[i].moved ? 0 : 1000000 + (int64_t)i;
	}
	CHECK_EQ(pv_charge_resumptions(p), moved);
	CHECK_EQ(p->system_cpu_ns, system);
	for (size_t i = 0; i < NSTACKS; i++) {
		const struct pv_sample *s = &p->samples[i];
		const struct pv_location *leaf = &p->locations[p->stack_locs[s->loc_off]];
		const char *name = pv_str(p, p->functions[p->lines[leaf->line_off].function].name);

		if (stacks[i].moved) {
			/* the user frames, exact */
			CHECK_EQ(s->nlocs, 2);
			CHECK_STR(name, "read");
			CHECK(!(s->flags & PV_SAMPLE_KERNEL));
		} else {
			CHECK_STR(name, stacks[i].frames[0]);
			CHECK(s->flags & PV_SAMPLE_KERNEL);
		}
	}
	pv_profile_free(p);
}

/* perf script's samples, and a POSIX timer trace's: as recorded */
static void test_others(void)
{
	static const int samplers[] = { PV_SAMPLER_UNKNOWN, PV_SAMPLER_POSIX };

	for (size_t k = 0; k < sizeof samplers / sizeof samplers[0]; k++) {
		struct pv_profile *p = profile_of(samplers[k]);

		if (!p)
			return;
		CHECK_EQ(pv_charge_resumptions(p), 0);
		for (size_t i = 0; i < NSTACKS; i++)
			CHECK(p->samples[i].flags & PV_SAMPLE_KERNEL);
		pv_profile_free(p);
	}
}

int main(void)
{
	pv_error_set_sink(quiet_sink);
	test_charged();
	test_others();
	return check_done("test-kresume");
}
