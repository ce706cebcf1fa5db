/* kallsyms.h - the functions of kernel frames, from /proc/kallsyms */
#ifndef PROFVIEW_KALLSYMS_H
#define PROFVIEW_KALLSYMS_H

#include "profile.h"

/* Gives every location of a kernel mapping (PV_MAP_KERNEL) that has no
 * lines yet its function: the location at address 0 is "[kernel]"
 * (PV_KERNEL_FRAME_NAME); others are named from the kernel's symbol table
 * when the mapping is of this boot (its build id, which the raw reader
 * sets to the boot id of the trace's machine, is this machine's boot id)
 * and the table shows addresses (kernel.kptr_restrict hides them from
 * users without CAP_SYSLOG), else "[kernel.kallsyms]+0xADDRESS".  Never
 * opens the kernel mapping as a file.  kallsyms and boot_id are the table
 * and this machine's boot id file, NULL for /proc/kallsyms and
 * /proc/sys/kernel/random/boot_id.  Says once why addresses stay
 * addresses, unless quiet.  Returns 0, or -1 when out of memory. */
int pv_symbolize_kernel(struct pv_profile *p, const char *kallsyms, const char *boot_id, bool quiet);

#endif
