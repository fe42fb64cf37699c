import CGlibcMalloc

/// How many malloc arenas glibc may create in a callpush process.
///
/// glibc gives a thread that finds every arena busy an arena of its own, up to 8 per core, and memory freed into an
/// arena stays there for that arena's later allocations. callpush runs 15–20 threads (librdkafka's broker and main
/// threads for the consumer and the producer, the consumer's poll thread, the producer thread, the event loops,
/// Dispatch's workers), so what a burst allocated and freed stayed spread over up to 16 arenas: in the bench's
/// repeated in-process pipeline runs the memory malloc held free grew by 7–15 MB a run while what was in use stayed
/// at 1–3 MB. Two arenas keep freed memory where the next burst reuses it; each thread's own cache (tcache) still
/// serves most small allocations without taking an arena's lock.
///
/// `MALLOC_ARENA_MAX` (or `GLIBC_TUNABLES=glibc.malloc.arena_max=N`) in the environment wins: glibc applies it
/// before callpush starts, and then callpush leaves the limit alone.
enum MallocArenaLimit {
    /// The limit when the environment sets none. Default: 2.
    static let defaultArenas: Int32 = 2

    /// Sets ``defaultArenas`` unless the environment chose a limit; call it before the process starts threads.
    /// - Returns: the limit in force and where it came from, for the start-up log.
    @discardableResult
    static func apply(environment: [String: String]) -> String {
        if let value = environment["MALLOC_ARENA_MAX"] { return "\(value) (MALLOC_ARENA_MAX)" }
        if let tunables = environment["GLIBC_TUNABLES"], tunables.contains("glibc.malloc.arena_max") {
            return "GLIBC_TUNABLES"
        }
        return mallopt(M_ARENA_MAX, defaultArenas) == 1 ? "\(defaultArenas)" : "glibc default (mallopt refused)"
    }
}
