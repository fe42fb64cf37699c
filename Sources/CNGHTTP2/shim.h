#ifndef CNGHTTP2_SHIM_H
#define CNGHTTP2_SHIM_H
#include <nghttp2/nghttp2.h>

// Linux I/O headers for the HTTP2 module's event loop. Glibc's Swift module map does not export
// <sys/epoll.h> or <sys/eventfd.h>; HTTP2 is the only user and already depends on this target,
// so they live here rather than in a new C target (Package.swift stays unchanged).
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

static inline int CNGHTTP2_EFD_NONBLOCK(void) { return EFD_NONBLOCK; }
static inline int CNGHTTP2_EFD_CLOEXEC(void) { return EFD_CLOEXEC; }
static inline int CNGHTTP2_EPOLL_CLOEXEC(void) { return EPOLL_CLOEXEC; }

#endif
