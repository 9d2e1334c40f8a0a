// The smallest program found that Swift 6.3.1 (x86_64 Linux) compiles wrong at
// -O, -Osize and -Ounchecked: it prints "false", where -Onone prints "true".
// An async closure whose result is returned indirectly (the operation of
// Task, group.addTask or withTaskCancellationHandler) makes a struct with a
// non-trivial field, changes a field on one path only, and returns it. The
// store of `on = true` is deleted (docs/DEVELOPING.md, "A miscompile in the
// release build"). scripts/check-toolchain.sh builds it both ways.
struct V { var on = true; var s: String? }
func run(_ off: Bool) async -> V {
  await Task { var v = V(); if off { v.on = false }; return v }.value
}
print(await run(CommandLine.arguments.count > 1).on)
