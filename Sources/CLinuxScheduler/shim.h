#ifndef CLINUXSCHEDULER_SHIM_H
#define CLINUXSCHEDULER_SHIM_H
// Linux I/O headers for Runtime's event loops and sockets: Glibc's Swift module map does not export
// <sys/epoll.h>, <sys/eventfd.h> or <netinet/tcp.h>, and Runtime's only C dependency is this target.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

static inline int callpush_efd_nonblock(void) { return EFD_NONBLOCK; }
static inline int callpush_efd_cloexec(void) { return EFD_CLOEXEC; }
static inline int callpush_epoll_cloexec(void) { return EPOLL_CLOEXEC; }

// sched_setattr(2) for the calling thread: glibc 2.36 has no wrapper, and Swift cannot call the variadic syscall(2).
#include <errno.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/// Asks the kernel to run the calling thread in time slices of `slice_ns` nanoseconds, keeping its policy
/// (SCHED_OTHER) and nice value. Linux 6.12+ (EEVDF) takes it as the thread's custom slice, clamped to 0.1–100 ms;
/// older kernels accept and ignore it. Returns 0, or the errno of a refusal.
static inline int callpush_request_time_slice(uint64_t slice_ns) {
    struct {
        uint32_t size;
        uint32_t policy;
        uint64_t flags;
        int32_t nice;
        uint32_t priority;
        uint64_t runtime;
        uint64_t deadline;
        uint64_t period;
    } attr = {0};
    errno = 0;
    int nice_value = getpriority(PRIO_PROCESS, 0);  // on Linux: the calling thread's
    if (nice_value == -1 && errno != 0) return errno;
    attr.size = sizeof(attr);
    attr.policy = 0;  // SCHED_OTHER
    attr.nice = nice_value;
    attr.runtime = slice_ns;
    return syscall(SYS_sched_setattr, 0, &attr, 0) == 0 ? 0 : errno;
}
#endif
