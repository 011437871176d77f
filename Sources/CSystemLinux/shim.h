#ifndef ONBOARD_CSYSTEMLINUX_SHIM_H
#define ONBOARD_CSYSTEMLINUX_SHIM_H
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/// Sets the calling thread's nice value (Linux schedules threads, so this is the thread's own):
/// 0 on success, -1 with errno set (EACCES/EPERM without CAP_SYS_NICE for a negative value).
static inline int onboard_set_thread_nice(int nice) {
    return setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice);
}
#endif
