#ifndef ONBOARD_CSYSTEMLINUX_SHIM_H
#define ONBOARD_CSYSTEMLINUX_SHIM_H
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/// Sets the calling thread's nice value (Linux schedules threads, so this is the thread's own):
/// 0 on success, -1 with errno set (EACCES/EPERM without CAP_SYS_NICE for a negative value).
static inline int onboard_set_thread_nice(int nice) {
    return setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice);
}

/// Names the calling thread (what `top -H` and a debugger show); Linux keeps its first 15 bytes.
static inline int onboard_set_thread_name(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}
#endif
