/* syscall_filter.c - the seccomp filter of a candidate's process (syscall_filter.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "syscall_filter.h"

#if defined(__x86_64__)
#define FILTER_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define FILTER_ARCH AUDIT_ARCH_AARCH64
#endif

/* The refused calls; a name this architecture lacks is left out by the preprocessor. */
static const int refused[] = {
#ifdef SYS_ptrace
    SYS_ptrace,
#endif
#ifdef SYS_process_vm_readv
    SYS_process_vm_readv,
#endif
#ifdef SYS_process_vm_writev
    SYS_process_vm_writev,
#endif
#ifdef SYS_perf_event_open
    SYS_perf_event_open,
#endif
#ifdef SYS_bpf
    SYS_bpf,
#endif
#ifdef SYS_kexec_load
    SYS_kexec_load,
#endif
#ifdef SYS_kexec_file_load
    SYS_kexec_file_load,
#endif
#ifdef SYS_init_module
    SYS_init_module,
#endif
#ifdef SYS_finit_module
    SYS_finit_module,
#endif
#ifdef SYS_delete_module
    SYS_delete_module,
#endif
#ifdef SYS_mount
    SYS_mount,
#endif
#ifdef SYS_umount2
    SYS_umount2,
#endif
#ifdef SYS_pivot_root
    SYS_pivot_root,
#endif
#ifdef SYS_move_mount
    SYS_move_mount,
#endif
#ifdef SYS_fsopen
    SYS_fsopen,
#endif
#ifdef SYS_keyctl
    SYS_keyctl,
#endif
#ifdef SYS_add_key
    SYS_add_key,
#endif
#ifdef SYS_request_key
    SYS_request_key,
#endif
#ifdef SYS_setns
    SYS_setns,
#endif
#ifdef SYS_unshare
    SYS_unshare,
#endif
#ifdef SYS_swapon
    SYS_swapon,
#endif
#ifdef SYS_swapoff
    SYS_swapoff,
#endif
#ifdef SYS_reboot
    SYS_reboot,
#endif
#ifdef SYS_settimeofday
    SYS_settimeofday,
#endif
#ifdef SYS_clock_settime
    SYS_clock_settime,
#endif
#ifdef SYS_syslog
    SYS_syslog,
#endif
#ifdef SYS_acct
    SYS_acct,
#endif
#ifdef SYS_open_by_handle_at
    SYS_open_by_handle_at,
#endif
#ifdef SYS_userfaultfd
    SYS_userfaultfd,
#endif
#ifdef SYS_iopl
    SYS_iopl,
#endif
#ifdef SYS_ioperm
    SYS_ioperm,
#endif
#ifdef SYS_kcmp
    SYS_kcmp,
#endif
#ifdef SYS_pidfd_getfd
    SYS_pidfd_getfd,
#endif
    /* a filter of its own (seccomp(2); prctl's PR_SET_SECCOMP below) can trap
       and rewrite what the process's harness code writes (pygpubench's
       seccomp_trap): none of PyTorch, CUDA or a compiler installs one */
#ifdef SYS_seccomp
    SYS_seccomp,
#endif
};

const char *syscall_filter_refused(void)
{
    return "ptrace,process_vm_readv,process_vm_writev,perf_event_open,bpf,kexec_load,kexec_file_load,init_module,"
           "finit_module,delete_module,mount,umount2,pivot_root,move_mount,fsopen,keyctl,add_key,request_key,setns,"
           "unshare,swapon,swapoff,reboot,settimeofday,clock_settime,syslog,acct,open_by_handle_at,userfaultfd,iopl,"
           "ioperm,kcmp,pidfd_getfd,seccomp,prctl(PR_SET_SECCOMP)";
}

int syscall_filter_apply(char *why, size_t n)
{
#ifndef FILTER_ARCH
    snprintf(why, n, "no seccomp filter for this architecture");
    return -1;
#else
    enum { N_REFUSED = sizeof refused / sizeof refused[0] };
    struct sock_filter prog[6 + 2 * N_REFUSED + 5];
    size_t k = 0;
    prog[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    prog[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FILTER_ARCH, 1, 0);
    prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    prog[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
#if defined(__x86_64__)
    /* the x32 calls (bit 30) name the same functions by other numbers: all refused */
    prog[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1);
    prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
#endif
    for (size_t i = 0; i < N_REFUSED; i++) {
        prog[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)refused[i], 0, 1);
        prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
    }
    /* prctl(PR_SET_SECCOMP, ...): refused; every other prctl allowed (the low
       word of the first argument: both architectures are little-endian) */
    prog[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)SYS_prctl, 0, 3);
    prog[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]));
    prog[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_SET_SECCOMP, 0, 1);
    prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
    prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog fprog = { .len = (unsigned short)k, .filter = prog };
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) != 0) {
        snprintf(why, n, "cannot install the seccomp filter: %s", strerror(errno));
        return -1;
    }
    return 0;
#endif
}
