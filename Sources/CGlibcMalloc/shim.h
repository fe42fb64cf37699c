#ifndef CGLIBCMALLOC_SHIM_H
#define CGLIBCMALLOC_SHIM_H
// glibc's malloc statistics and tuning (mallinfo2, malloc_trim, mallopt), which Swift's Glibc module leaves out.
#include <malloc.h>
#endif
