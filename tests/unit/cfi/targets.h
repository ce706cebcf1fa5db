/* targets.h - the functions test-cfi steps through */
#ifndef PROFVIEW_TEST_CFI_TARGETS_H
#define PROFVIEW_TEST_CFI_TARGETS_H

int cfi_fp_inner(volatile int *v, int n);
int cfi_fp_target(int n);
long cfi_nofp_inner(long *a, int n);
long cfi_nofp_target(int n);
long cfi_nofp_aligned(int n);
long cfi_nofp_drap(int n);
int cfi_lib_work(int n);
int cfi_plugin_work(int n);

#endif
