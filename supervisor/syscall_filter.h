/*
 * syscall_filter.h - the system calls a candidate's process is refused
 * (docs/audit.md, "Confinement"): a seccomp filter that answers EPERM to
 * the calls that reach other processes' memory or the kernel's state
 * (ptrace, process_vm_readv/writev, perf_event_open, bpf, kexec, module
 * loading, mount, keyrings, namespaces, swap, reboot, clock setting), and
 * kills a process of another architecture's calling convention (a 32-bit
 * int 0x80 call would go around the table).
 */
#ifndef KAUDIT_SYSCALL_FILTER_H
#define KAUDIT_SYSCALL_FILTER_H

#include <stddef.h>

/* Installs the filter on the calling thread (inherited by its children and
 * across exec; no_new_privs must be set first).  0, or -1 with why. */
int syscall_filter_apply(char *why, size_t n);

/* The names of the refused calls, comma-separated, for the record. */
const char *syscall_filter_refused(void);

#endif
