#ifndef ONBOARD_CPOSTGRES_SHIM_H
#define ONBOARD_CPOSTGRES_SHIM_H
#include <libpq-fe.h>
#endif
