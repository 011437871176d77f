#ifndef ONBOARD_CSYSTEMLINUX_SHIM_H
#define ONBOARD_CSYSTEMLINUX_SHIM_H
#include <sys/epoll.h>
#include <sys/eventfd.h>
#endif
