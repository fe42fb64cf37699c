import CGlibcMalloc

/// How many malloc arenas glibc may create in a callpush process.
///
/// glibc gives a thread that finds every arena busy an arena of its own, up to 8 per core, and memory freed into an
/// arena stays there for that arena's later allocations. callpush runs 15–20 threads (librdkafka's broker and main
/// threads for the consumer and the producer, the consumer's poll thread, the producer thread, the event loops,
/// Dispatch's workers).
///
/// - `callpush run` (``workerArenas``, 8): every busy thread its own arena. With 2, the worker's threads and
///   librdkafka's contend for the arena locks, which costs CPU per event; its memory stays within the bench's bounds
///   with 8, as `run` gives malloc's free pages back every 30 s (`MallocTrimmer`).
/// - Every other command (``defaultArenas``, 2): `demo` and the tests run whole pipelines in one process, one after
///   another; with more arenas what each run allocated and freed stays spread over them and the memory malloc holds
///   free grows from run to run. Two arenas keep freed memory where the next run reuses it.
///
/// The measurements behind both are in docs/performance.md, "Memory allocator".
///
/// `MALLOC_ARENA_MAX` (or `GLIBC_TUNABLES=glibc.malloc.arena_max=N`) in the environment wins: glibc applies it
/// before callpush starts, and then callpush leaves the limit alone.
package enum MallocArenaLimit {
    /// The limit for `callpush run` when the environment sets none. Default: 8.
    package static let workerArenas: Int32 = 8
    /// The limit for every other command when the environment sets none. Default: 2.
    package static let defaultArenas: Int32 = 2

    /// Sets the limit for `command` (the first argument) unless the environment chose one; call it before the
    /// process starts threads.
    /// - Returns: the limit in force and where it came from, for the start-up log.
    @discardableResult
    package static func apply(environment: [String: String], command: String?) -> String {
        if let value = environment["MALLOC_ARENA_MAX"] { return "\(value) (MALLOC_ARENA_MAX)" }
        if let tunables = environment["GLIBC_TUNABLES"], tunables.contains("glibc.malloc.arena_max") {
            return "GLIBC_TUNABLES"
        }
        let arenas = command == "run" ? workerArenas : defaultArenas
        return mallopt(M_ARENA_MAX, arenas) == 1 ? "\(arenas)" : "glibc default (mallopt refused)"
    }
}
