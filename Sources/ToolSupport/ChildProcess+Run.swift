import Glibc

extension ChildProcess {
    /// Runs `arguments` (looked up on PATH through `/usr/bin/env` unless `executable` is given) to completion: both
    /// pipes are drained together (a chatty child never blocks on a full pipe) while `input` goes to stdin, which is
    /// then closed.
    /// - Parameters:
    ///   - environment: the child's whole environment; nil: this process's.
    ///   - timeoutSeconds: the child is killed (SIGKILL) after this long; what it wrote until then is kept.
    /// - Throws: ``ProcessStartError`` when it cannot start.
    package static func run(
        _ arguments: [String], executable: String = "/usr/bin/env", environment: [String: String]? = nil,
        currentDirectory: String? = nil, input: String? = nil, timeoutSeconds: Double = 60
    ) throws(ProcessStartError) -> ProcessResult {
        let child = try ChildProcess(arguments, executable: executable, environment: environment,
                                     currentDirectory: currentDirectory, input: .pipe, output: .pipe, errors: .pipe)
        let deadline = ContinuousClock.now + .seconds(timeoutSeconds)
        let collected = child.collect(input: Array((input ?? "").utf8), until: deadline)
        var timedOut = collected.timedOut
        if timedOut {
            child.kill()
        } else if child.wait(timeout: deadline - .now) == -1 && child.terminationSignal == SIGKILL {
            timedOut = true  // it closed its output but ran on
        }
        let killed = timedOut || child.terminationSignal == SIGKILL
        return ProcessResult(status: killed ? -1 : child.terminationStatus ?? -1,
                             stdout: String(decoding: collected.stdout, as: UTF8.self),
                             stderr: String(decoding: collected.stderr, as: UTF8.self),
                             timedOut: timedOut)
    }

    /// Reads stdout and stderr (both pipes) to their ends while writing `input` to stdin and then closing it. At
    /// `deadline` it kills the child and reads for one more second at most: a grandchild may hold the pipes open.
    private func collect(input: [UInt8], until deadline: ContinuousClock.Instant)
        -> (stdout: [UInt8], stderr: [UInt8], timedOut: Bool)
    {
        var collected: [[UInt8]] = [[], []]
        var open = [outputDescriptor, errorDescriptor]
        var written = 0
        let inputEnd = inputDescriptor.withLock { $0 }
        if input.isEmpty { closeInput() } else { _ = fcntl(inputEnd, F_SETFL, fcntl(inputEnd, F_GETFL) | O_NONBLOCK) }
        var writing = !input.isEmpty
        var timedOut = false
        var end = deadline
        Self.withBrokenPipeSignalBlocked {
            while open.contains(where: { $0 >= 0 }) {
                let remaining = end - .now
                if remaining <= .zero {
                    if timedOut { break }
                    timedOut = true
                    signal(SIGKILL)
                    end = .now + .seconds(1)
                    continue
                }
                var entries = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
                if writing { entries.append(pollfd(fd: inputEnd, events: Int16(POLLOUT), revents: 0)) }
                let ready = poll(&entries, nfds_t(entries.count), Self.milliseconds(remaining))
                guard ready > 0 else { continue }
                for index in open.indices where open[index] >= 0 && entries[index].revents != 0 {
                    let bytes = Self.read(open[index], until: .now + .seconds(1)) ?? []
                    if bytes.isEmpty { open[index] = -1 } else { collected[index] += bytes }
                }
                if writing, let entry = entries.last, entry.revents != 0 {
                    let count = input[written...].withUnsafeBytes { Glibc.write(inputEnd, $0.baseAddress, $0.count) }
                    if count > 0 { written += count }
                    if written == input.count || (count < 0 && errno != EINTR && errno != EAGAIN) {
                        writing = false
                        closeInput()
                    }
                }
            }
        }
        if writing { closeInput() }
        return (collected[0], collected[1], timedOut)
    }
}
