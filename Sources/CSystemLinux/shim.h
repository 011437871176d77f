#ifndef ONBOARD_CSYSTEMLINUX_SHIM_H
#define ONBOARD_CSYSTEMLINUX_SHIM_H
#include <sys/epoll.h>
#endif
