import Foundation
package import Glibc
import Synchronization

/// Another program started by a test or the bench, the one way this package starts programs: `posix_spawn`, its stdin
/// from `/dev/null` or a pipe, its stdout and stderr each to a pipe, a log file, `/dev/null` or this process's own, no
/// other descriptor of this process, and reaping with `wait4` (which also gives its CPU time). Run to completion with
/// ``run(_:executable:environment:currentDirectory:input:timeoutSeconds:)``.
///
/// The child starts with no blocked signal and every handler at its default: a process that blocks SIGTERM for a
/// signal thread would otherwise pass that on. A child that ignores SIGTERM anyway is killed (SIGKILL) when the grace
/// period of ``terminate(grace:)`` ends. A child still running when this object goes is killed, and its log removed.
///
/// Not Foundation's `Process`: reading its pipes with `FileHandle` traps on `EINTR`, which libdispatch's signal
/// sources make happen in processes that spawn children.
package final class ChildProcess: Sendable {
    /// Where the child's stdin comes from.
    package enum Input: Sendable {
        /// `/dev/null`: the child reads end of file at once.
        case none
        /// A pipe, written with ``write(_:)`` and closed with ``closeInput()``.
        case pipe
    }

    /// Where the child's stdout or stderr goes.
    package enum Output: Sendable, Equatable {
        /// A pipe: stdout's is read with ``readLine(timeout:)``.
        case pipe
        /// The file at ``logPath``, one for both when stdout and stderr go there (``log``).
        case log
        /// `/dev/null`.
        case discard
        /// This process's own stdout or stderr.
        case inherit
    }

    package let pid: pid_t
    /// The program's path (its `argv[0]`).
    package let executable: String
    /// The file that stdout and stderr sent to ``Output/log`` go to; nil when neither goes there.
    package let logPath: String?
    /// The read ends of the stdout and stderr pipes, -1 for an output that is not a pipe.
    let outputDescriptor: Int32
    let errorDescriptor: Int32
    /// The write end of the stdin pipe until it is closed, -1 then and without one.
    let inputDescriptor: Mutex<Int32>
    /// Stdout read past the last line ``readLine(timeout:)`` returned.
    private let unreadOutput = Mutex<[UInt8]>([])
    private let state = Mutex(State())

    private struct State {
        /// The exit status or the number of the signal that ended it; nil until it was reaped.
        var status: Int32?
        var signal: Int32?
        var cpuSeconds = 0.0
    }

    /// Starts `executable` (`/usr/bin/env` looks the first argument up on PATH) with `arguments`.
    /// - Parameters:
    ///   - environment: the child's whole environment; nil: this process's.
    ///   - currentDirectory: the child's working directory; nil: this process's.
    /// - Throws: ``ProcessStartError`` when a pipe, the log file or the spawn fails (a missing executable among them).
    package init(
        _ arguments: [String], executable: String = "/usr/bin/env", environment: [String: String]? = nil,
        currentDirectory: String? = nil, input: Input = .none, output: Output = .log, errors: Output = .log
    ) throws(ProcessStartError) {
        let spawned = try Self.spawn([executable] + arguments, environment: environment,
                                     currentDirectory: currentDirectory, input: input, output: output, errors: errors)
        self.executable = executable
        pid = spawned.pid
        logPath = spawned.logPath
        outputDescriptor = spawned.output
        errorDescriptor = spawned.errors
        inputDescriptor = Mutex(spawned.input)
    }

    deinit {
        if !reap() {
            signal(SIGKILL)
            while !reap() { usleep(1_000) }
        }
        closeInput()
        if outputDescriptor >= 0 { close(outputDescriptor) }
        if errorDescriptor >= 0 { close(errorDescriptor) }
        if let logPath { unlink(logPath) }
    }

    // MARK: - State

    /// Whether it has not exited yet.
    package var isRunning: Bool { !reap() }

    /// Its exit status, or the number of the signal that ended it; nil while it runs.
    package var terminationStatus: Int32? {
        reap()
        return state.withLock { $0.status }
    }

    /// The signal that ended it; nil while it runs and when it exited by itself.
    package var terminationSignal: Int32? {
        reap()
        return state.withLock { $0.signal }
    }

    /// CPU seconds (user + system) it used, known once it has exited.
    package var cpuSeconds: Double {
        reap()
        return state.withLock { $0.cpuSeconds }
    }

    // MARK: - Signals and waiting

    /// Sends `number` to it unless it was reaped (its pid may be another process's by then).
    package func signal(_ number: Int32) {
        state.withLock { state in
            if state.status == nil { _ = Glibc.kill(pid, number) }
        }
    }

    /// Waits until it exits, killing it (SIGKILL) when `timeout` passes first.
    /// - Returns: its ``terminationStatus``, or -1 when the timeout killed it.
    @discardableResult
    package func wait(timeout: Duration) -> Int32 {
        if waitForExit(until: .now + timeout) { return terminationStatus ?? -1 }
        kill()
        return -1
    }

    /// SIGTERM, and SIGKILL when it still runs after `grace` (it may ignore SIGTERM).
    /// - Returns: its ``terminationStatus``, or -1 when it had to be killed.
    @discardableResult
    package func terminate(grace: Duration = .seconds(15)) -> Int32 {
        guard isRunning else { return terminationStatus ?? -1 }
        signal(SIGTERM)
        return wait(timeout: grace)
    }

    /// SIGKILL, as a crash or an OOM kill would; returns once it was reaped.
    package func kill() {
        signal(SIGKILL)
        while !reap() { usleep(1_000) }
    }

    /// True once it has exited, polling every 2 ms until `deadline`.
    private func waitForExit(until deadline: ContinuousClock.Instant) -> Bool {
        while !reap() {
            if ContinuousClock.now >= deadline { return false }
            usleep(2_000)
        }
        return true
    }

    /// True once it has exited (reaped now or before).
    @discardableResult
    private func reap() -> Bool {
        state.withLock { state in
            if state.status != nil { return true }
            var status: Int32 = 0
            var usage = rusage()
            let result = wait4(pid, &status, WNOHANG, &usage)
            if result == 0 || (result < 0 && errno == EINTR) { return false }
            if result == pid {
                let signal = status & 0x7f
                state.status = signal == 0 ? (status >> 8) & 0xff : signal
                state.signal = signal == 0 ? nil : signal
                state.cpuSeconds = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
                    + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
            } else {
                state.status = -1  // not a child of this process any more: it was reaped elsewhere
            }
            return true
        }
    }

    // MARK: - Input and output

    /// The next line of its stdout (``Output/pipe``) without the newline, or what is left before end of file; nil at
    /// end of file or when `timeout` passes first (what was read of the line stays for the next call).
    package func readLine(timeout: Duration = .seconds(60)) -> String? {
        guard outputDescriptor >= 0 else { return nil }
        let deadline = ContinuousClock.now + timeout
        return unreadOutput.withLock { buffer in
            while true {
                if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: buffer[..<newline], as: UTF8.self)
                    buffer.removeSubrange(...newline)
                    return line
                }
                guard let bytes = Self.read(outputDescriptor, until: deadline) else { return nil }
                if bytes.isEmpty {
                    defer { buffer.removeAll() }
                    return buffer.isEmpty ? nil : String(decoding: buffer, as: UTF8.self)
                }
                buffer += bytes
            }
        }
    }

    /// Writes `text` to its stdin (``Input/pipe``); false when the child closed its end or stdin is not a pipe.
    @discardableResult
    package func write(_ text: String) -> Bool {
        inputDescriptor.withLock { descriptor in
            guard descriptor >= 0 else { return false }
            let bytes = Array(text.utf8)
            var offset = 0
            Self.withBrokenPipeSignalBlocked {
                while offset < bytes.count {
                    let count = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
                    if count > 0 { offset += count } else if count < 0 && errno == EINTR { continue } else { return }
                }
            }
            return offset == bytes.count
        }
    }

    /// Closes its stdin: it reads end of file.
    package func closeInput() {
        inputDescriptor.withLock { descriptor in
            if descriptor >= 0 { close(descriptor) }
            descriptor = -1
        }
    }

    /// What went to ``logPath``; empty without a log.
    package var log: String {
        guard let logPath, let data = FileManager.default.contents(atPath: logPath) else { return "" }
        return String(decoding: data, as: UTF8.self)
    }

    /// The last 20 lines of ``log``.
    package var logTail: String { log.split(separator: "\n").suffix(20).joined(separator: "\n") }

    /// Waits until `deadline` for `descriptor` to be readable and reads what is there: empty at end of file (or on an
    /// error), nil when `deadline` passed first.
    static func read(_ descriptor: Int32, until deadline: ContinuousClock.Instant) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let remaining = deadline - .now
            guard remaining > .zero else { return nil }
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, milliseconds(remaining))
            if ready == 0 || (ready < 0 && errno == EINTR) { continue }
            guard ready > 0 else { return [] }
            let count = Glibc.read(descriptor, &buffer, buffer.count)
            if count > 0 { return Array(buffer[..<count]) }
            if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            return []
        }
    }

    /// `duration` as a `poll` timeout: whole milliseconds, rounded up, at most a day.
    static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        return Int32(max(0, min(86_400_000, seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)))
    }

    /// Runs `body` with SIGPIPE blocked on this thread, taking one that a write to a closed pipe raised meanwhile:
    /// a child gone is then `EPIPE` to the writer, not the end of this process.
    static func withBrokenPipeSignalBlocked<T>(_ body: () -> T) -> T {
        var brokenPipe = sigset_t()
        sigemptyset(&brokenPipe)
        sigaddset(&brokenPipe, SIGPIPE)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &brokenPipe, &previous)
        defer {
            if sigismember(&previous, SIGPIPE) == 0 {
                var pending = sigset_t()
                var now = timespec()
                if sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1 { _ = sigtimedwait(&brokenPipe, nil, &now) }
                pthread_sigmask(SIG_SETMASK, &previous, nil)
            }
        }
        return body()
    }
}
