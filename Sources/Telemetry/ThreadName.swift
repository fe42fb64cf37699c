#if canImport(Glibc)
import Glibc
#endif

/// Names the calling thread in the kernel, so `top -H`, `perf` and `/proc/PID/task/*/comm` tell the worker's
/// threads apart (a thread otherwise inherits its creator's name, e.g. Dispatch's "com.apple.root.default-qos").
///
/// Writes `/proc/thread-self/comm` (what `pthread_setname_np` does, which Swift's Glibc module does not export).
package enum ThreadName {
    /// Linux keeps at most 15 bytes of a thread name: longer names are cut to that.
    package static let maximumLength = 15

    private static let path = "/proc/thread-self/comm"

    /// Names the calling thread `name`, cut to ``maximumLength`` bytes on a character boundary. Best effort: without
    /// `/proc` the thread keeps its name.
    package static func setCurrent(_ name: String) {
        let utf8 = Array(name.utf8)
        var end = min(utf8.count, maximumLength)
        // A cut before a continuation byte would split a character: cut before that character's lead byte instead.
        while end > 0, end < utf8.count, utf8[end] & 0xC0 == 0x80 { end -= 1 }
        let bytes = utf8[..<end]
        #if canImport(Glibc)
        let descriptor = open(path, O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        #endif
    }

    /// The calling thread's kernel name ("" without `/proc`).
    package static var current: String {
        var buffer = [UInt8](repeating: 0, count: maximumLength + 2)
        #if canImport(Glibc)
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return "" }
        defer { close(descriptor) }
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        buffer.removeSubrange(max(0, count)...)
        #endif
        if buffer.last == UInt8(ascii: "\n") { buffer.removeLast() }
        return String(decoding: buffer, as: UTF8.self)
    }

    /// The group a thread's name counts under in per-thread metrics, so the label set stays small: numbered names share
    /// one ("http2-loop-0" → "http2-loop"), librdkafka's threads ("rdk:main", "rdk:broker3") are "librdkafka",
    /// Dispatch's workers (their names end in "qos" or "qos.overcommit") are "dispatch"; other names stand as they are.
    package static func group(_ name: String) -> String {
        if name.hasPrefix("rdk:") { return "librdkafka" }
        if name.contains("qos") { return "dispatch" }
        var base = Substring(name)
        while let last = base.last, last.isASCII, last.isNumber { base.removeLast() }
        if base.count < name.count, base.hasSuffix("-"), base.count > 1 { return String(base.dropLast()) }
        return name
    }
}
