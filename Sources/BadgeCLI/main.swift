import BadgeMain
import Foundation

let status = await BadgeMain.run()
// The process ends without exit-time destructors. A cancelled command (Ctrl-C
// in a batch) leaves the drawings it abandoned running on badge's threads, and
// a library's exit handlers must not free what they are using: HarfBuzz frees
// its shared tables from `__cxa_atexit` handlers while a caption is being
// shaped. badge registers no exit handlers of its own; what is buffered on
// standard output and error is flushed first.
fflush(nil)
_exit(status)
