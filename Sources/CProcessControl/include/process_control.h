// Linux's prctl, which is variadic and so not callable from Swift, for the
// one option badge sets.
#ifndef BADGE_PROCESS_CONTROL_H
#define BADGE_PROCESS_CONTROL_H

// prctl(PR_SET_CHILD_SUBREAPER, 1): orphaned descendants of this process
// become its children instead of init's. 0, or -1 with errno set.
int badge_become_child_subreaper(void);

#endif
