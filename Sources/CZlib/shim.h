#ifndef ONBOARD_CZLIB_SHIM_H
#define ONBOARD_CZLIB_SHIM_H
#include <zlib.h>

/* zlib's inflateInit2 is a macro, which Swift cannot import. */
static inline int onboard_inflateInit2(z_stream *stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}
#endif
