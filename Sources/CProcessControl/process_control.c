#include "process_control.h"

#if defined(__linux__)
#include <sys/prctl.h>

int badge_become_child_subreaper(void) { return prctl(PR_SET_CHILD_SUBREAPER, 1UL, 0UL, 0UL, 0UL); }
#else
#include <errno.h>

int badge_become_child_subreaper(void) {
    errno = ENOSYS;
    return -1;
}
#endif
