import Foundation
import Glibc
import Testing
import ToolSupport

/// Programs run to completion and in the background, through `/bin/sh`.
@Suite struct ChildProcessTests {
    static func shell(_ script: String, timeoutSeconds: Double = 30, input: String? = nil) throws -> ProcessResult {
        try ChildProcess.run(["-c", script], executable: "/bin/sh", input: input, timeoutSeconds: timeoutSeconds)
    }

    static func background(_ script: String, input: ChildProcess.Input = .none, output: ChildProcess.Output = .pipe)
        throws -> ChildProcess
    {
        try ChildProcess(["-c", script], executable: "/bin/sh", input: input, output: output, errors: .log)
    }

    /// The mask of blocked signals in `/proc/<pid>/status` (`SigBlk`), as hex digits; nil when unreadable.
    static func blockedSignals(of pid: pid_t) -> String? {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        return status.split(separator: "\n").first { $0.hasPrefix("SigBlk:") }?.split(separator: "\t").last.map(String.init)
    }

    // MARK: - Run to completion

    @Test func runCapturesTheExitStatusStdoutAndStderrApart() throws {
        let result = try Self.shell("printf 'to stdout'; printf 'to stderr' >&2; exit 3")
        #expect(result.status == 3)
        #expect(result.stdout == "to stdout")
        #expect(result.stderr == "to stderr")
        #expect(result.output == "to stdoutto stderr")
        #expect(!result.timedOut)
    }

    @Test func runGivesInputEnvironmentAndDirectory() throws {
        let echoed = try ChildProcess.run(["cat"], input: "line one\nline two\n")
        #expect(echoed.status == 0)
        #expect(echoed.stdout == "line one\nline two\n")
        let environment = try ChildProcess.run(["-c", "printf '%s' \"$GREETING\""], executable: "/bin/sh",
                                               environment: ["GREETING": "hello"])
        #expect(environment.stdout == "hello")
        let directory = try ChildProcess.run(["pwd"], currentDirectory: "/")
        #expect(directory.stdout == "/\n")
    }

    /// More than a pipe holds on both outputs at once: a runner reading one pipe to its end before the other would
    /// wait forever on a child blocked writing the other.
    @Test func runDrainsBothPipesTogether() throws {
        let result = try Self.shell("head -c 300000 /dev/zero >&2; head -c 200000 /dev/zero", timeoutSeconds: 20)
        #expect(!result.timedOut)
        #expect(result.stderr.utf8.count == 300_000)
        #expect(result.stdout.utf8.count == 200_000)
    }

    @Test func runKillsAChildThatOutlivesItsTimeout() throws {
        let started = ContinuousClock.now
        let result = try Self.shell("printf started; exec sleep 30", timeoutSeconds: 0.5)
        #expect(result.timedOut)
        #expect(result.status == -1)
        #expect(result.stdout == "started", "what it wrote before the timeout is kept")
        #expect(ContinuousClock.now - started < .seconds(10))
    }

    /// The shell's own child holds the pipes open after the shell is killed: the runner stops reading a second later.
    @Test func runReturnsWhenAGrandchildHoldsThePipesAfterTheTimeout() throws {
        let started = ContinuousClock.now
        let result = try Self.shell("sleep 15; echo never", timeoutSeconds: 0.5)
        #expect(result.timedOut)
        #expect(result.status == -1)
        #expect(!result.stdout.contains("never"))
        #expect(ContinuousClock.now - started < .seconds(10))
    }

    @Test func aMissingProgramIsAStartError() throws {
        let error = try #require(throws: ProcessStartError.self) {
            try ChildProcess.run([], executable: "/nonexistent/callpush-no-such-program")
        }
        #expect(error.code == ENOENT)
        #expect(error.description == "cannot start /nonexistent/callpush-no-such-program: No such file or directory")
    }

    // MARK: - In the background

    @Test func aBackgroundChildsLinesAreReadInTurn() throws {
        let child = try Self.background("echo 127.0.0.1:9092; echo second; exec sleep 30")
        #expect(child.readLine(timeout: .seconds(10)) == "127.0.0.1:9092")
        #expect(child.readLine(timeout: .seconds(10)) == "second")
        #expect(child.readLine(timeout: .milliseconds(200)) == nil, "nothing more within the timeout")
        #expect(child.isRunning)
        child.kill()
        #expect(!child.isRunning)
        #expect(child.terminationSignal == SIGKILL)
        #expect(child.terminationStatus == SIGKILL)
    }

    @Test func linesWrittenToStdinComeBackAndClosingItEndsTheChild() throws {
        let child = try ChildProcess(["cat"], input: .pipe, output: .pipe)
        #expect(child.write("ping\n"))
        #expect(child.readLine(timeout: .seconds(10)) == "ping")
        child.closeInput()
        #expect(child.readLine(timeout: .seconds(10)) == nil, "end of file")
        #expect(child.wait(timeout: .seconds(10)) == 0)
        #expect(!child.write("late\n"))
    }

    @Test func stdoutAndStderrShareTheLogThatGoesWithTheChild() throws {
        var path = ""
        do {
            let child = try Self.background("echo to-stdout; echo to-stderr >&2", output: .log)
            path = try #require(child.logPath)
            #expect(child.wait(timeout: .seconds(10)) == 0)
            #expect(child.log == "to-stdout\nto-stderr\n")
            #expect(child.logTail == "to-stdout\nto-stderr")
        }
        #expect(!path.isEmpty && !FileManager.default.fileExists(atPath: path), "the log is removed with the child")
    }

    @Test func aChildThatIgnoresSIGTERMIsKilledAfterTheGracePeriod() throws {
        let child = try Self.background("trap '' TERM; echo ready; exec sleep 30")
        #expect(child.readLine(timeout: .seconds(10)) == "ready")
        let started = ContinuousClock.now
        #expect(child.terminate(grace: .milliseconds(300)) == -1, "it had to be killed")
        #expect(ContinuousClock.now - started >= .milliseconds(300))
        #expect(child.terminationSignal == SIGKILL)
    }

    /// A thread that blocks SIGTERM (as a signal-handling thread does) starts a child: the child's mask is empty, so
    /// SIGTERM ends it at once.
    @Test func aChildStartsWithNoBlockedSignals() throws {
        var terminate = sigset_t()
        sigemptyset(&terminate)
        sigaddset(&terminate, SIGTERM)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &terminate, &previous)
        let started = Result { try Self.background("echo ready; exec sleep 30") }
        pthread_sigmask(SIG_SETMASK, &previous, nil)
        let child = try started.get()
        #expect(child.readLine(timeout: .seconds(10)) == "ready")
        #expect(Self.blockedSignals(of: child.pid) == "0000000000000000")
        #expect(child.terminate(grace: .seconds(10)) == SIGTERM)
        #expect(child.terminationSignal == SIGTERM)
    }

    @Test func waitKillsAChildAtItsTimeoutAndCountsItsCPUTime() throws {
        let sleeper = try Self.background("exec sleep 30")
        #expect(sleeper.wait(timeout: .milliseconds(200)) == -1)
        #expect(!sleeper.isRunning)
        let spinner = try Self.background("i=0; while [ $i -lt 300000 ]; do i=$((i + 1)); done")
        #expect(spinner.wait(timeout: .seconds(60)) == 0)
        #expect(spinner.cpuSeconds > 0.01, "\(spinner.cpuSeconds) s")
    }
}
