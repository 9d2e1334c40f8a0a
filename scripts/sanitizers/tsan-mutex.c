// Teaches ThreadSanitizer the contended path of Swift's Synchronization.Mutex
// on Linux. Mutex's lock and unlock are inlined into badge's code, where TSan
// sees their atomic compare-and-swap on the lock word; when that fails, they
// call _MutexHandle's _lockSlow, _tryLockSlow and _unlockSlow in
// libswiftSynchronization.so, which TSan does not instrument: they spin with
// plain compare-and-swaps and hand the lock over in the kernel
// (FUTEX_LOCK_PI, FUTEX_UNLOCK_PI). TSan then sees no order between one
// holder of a contended Mutex and the next, and reports what the two did
// inside it as races.
//
// Loaded with LD_PRELOAD into the sanitized test process (scripts/sanitize.sh),
// this library comes first in symbol lookup, so the calls the process makes
// to those three functions reach these, which call the library's own and
// tell TSan of the acquire or release on the lock word, as the inlined fast
// path does. The TSan functions are weak: in a process without TSan (swift
// test itself, the programs the tests start) these only forward the call.
//
// The Swift calling convention passes `self` (the _MutexHandle, by address:
// it holds an Atomic) in the swiftself register, which clang's swiftcall
// assigns to a swift_context parameter.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

void __tsan_acquire(void *address) __attribute__((weak));
void __tsan_release(void *address) __attribute__((weak));

#define SWIFT __attribute__((swiftcall))
#define SELF __attribute__((swift_context))

#define LOCK_SLOW "$s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF"
#define TRY_LOCK_SLOW "$s15Synchronization12_MutexHandleV12_tryLockSlowSbyF"
#define UNLOCK_SLOW "$s15Synchronization12_MutexHandleV11_unlockSlowyyF"

typedef SWIFT void (*lock_slow_fn)(uint32_t thread, SELF void *handle);
typedef SWIFT bool (*try_lock_slow_fn)(SELF void *handle);
typedef SWIFT void (*unlock_slow_fn)(SELF void *handle);

static lock_slow_fn real_lock_slow;
static try_lock_slow_fn real_try_lock_slow;
static unlock_slow_fn real_unlock_slow;

// Resolved before main: the process loads libswiftSynchronization.so at start-up.
__attribute__((constructor)) static void resolve(void) {
    real_lock_slow = (lock_slow_fn)dlsym(RTLD_NEXT, LOCK_SLOW);
    real_try_lock_slow = (try_lock_slow_fn)dlsym(RTLD_NEXT, TRY_LOCK_SLOW);
    real_unlock_slow = (unlock_slow_fn)dlsym(RTLD_NEXT, UNLOCK_SLOW);
}

static void *required(void *function, const char *name) {
    if (!function) {
        fprintf(stderr, "tsan-mutex: %s not found after this library\n", name);
        abort();
    }
    return function;
}

SWIFT void lock_slow(uint32_t thread, SELF void *handle) __asm__(LOCK_SLOW);
SWIFT void lock_slow(uint32_t thread, SELF void *handle) {
    ((lock_slow_fn)required((void *)real_lock_slow, LOCK_SLOW))(thread, handle);
    if (__tsan_acquire) __tsan_acquire(handle);
}

SWIFT bool try_lock_slow(SELF void *handle) __asm__(TRY_LOCK_SLOW);
SWIFT bool try_lock_slow(SELF void *handle) {
    bool locked = ((try_lock_slow_fn)required((void *)real_try_lock_slow, TRY_LOCK_SLOW))(handle);
    if (locked && __tsan_acquire) __tsan_acquire(handle);
    return locked;
}

SWIFT void unlock_slow(SELF void *handle) __asm__(UNLOCK_SLOW);
SWIFT void unlock_slow(SELF void *handle) {
    if (__tsan_release) __tsan_release(handle);
    ((unlock_slow_fn)required((void *)real_unlock_slow, UNLOCK_SLOW))(handle);
}
