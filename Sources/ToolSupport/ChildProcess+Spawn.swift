import Foundation
import Glibc
import Synchronization

extension ChildProcess {
    /// What ``spawn(_:environment:currentDirectory:input:output:errors:)`` made: the child and this side's ends.
    struct Spawned {
        var pid: pid_t = 0
        var input: Int32 = -1
        var output: Int32 = -1
        var errors: Int32 = -1
        var logPath: String?
    }

    /// `posix_spawn` of `argv` (its first element the program's path) with the descriptors `input`, `output` and
    /// `errors` ask for, nothing else of this process's open, no signal blocked and every handler at its default.
    static func spawn(
        _ argv: [String], environment: [String: String]?, currentDirectory: String?, input: Input, output: Output,
        errors: Output
    ) throws(ProcessStartError) -> Spawned {
        let executable = argv[0]
        var spawned = Spawned()
        var childEnds: [Int32] = []
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            for descriptor in childEnds { close(descriptor) }
        }
        do throws(ProcessStartError) {
            switch input {
            case .none:
                posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            case .pipe:
                let (read, write) = try pipe(for: executable)
                spawned.input = write
                childEnds.append(read)
                posix_spawn_file_actions_adddup2(&actions, read, 0)
            }
            var log: Int32 = -1
            if output == .log || errors == .log {
                let path = NSTemporaryDirectory() + "callpush-child-\(UUID().uuidString.prefix(8)).log"
                log = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
                guard log >= 0 else { throw ProcessStartError(executable: executable, detail: "cannot create \(path)", code: errno) }
                spawned.logPath = path
                childEnds.append(log)
            }
            for (target, choice) in [(Int32(1), output), (Int32(2), errors)] {
                switch choice {
                case .pipe:
                    let (read, write) = try pipe(for: executable)
                    if target == 1 { spawned.output = read } else { spawned.errors = read }
                    childEnds.append(write)
                    posix_spawn_file_actions_adddup2(&actions, write, target)
                case .log:
                    posix_spawn_file_actions_adddup2(&actions, log, target)
                case .discard:
                    posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
                case .inherit:
                    break
                }
            }
            if let closeFrom = GlibcExtension.addCloseFrom { _ = closeFrom(&actions, 3) }
            if let currentDirectory {
                guard let changeDirectory = GlibcExtension.addChangeDirectory else {
                    throw ProcessStartError(executable: executable, detail: "this C library cannot set its directory", code: ENOSYS)
                }
                _ = changeDirectory(&actions, currentDirectory)
            }
            spawned.pid = try start(argv, environment: environment, actions: &actions)
            return spawned
        } catch {
            for descriptor in [spawned.input, spawned.output, spawned.errors] where descriptor >= 0 { close(descriptor) }
            if let path = spawned.logPath { unlink(path) }
            throw error
        }
    }

    /// `posix_spawn` itself, with an empty signal mask and default handlers.
    private static func start(
        _ argv: [String], environment: [String: String]?, actions: inout posix_spawn_file_actions_t
    ) throws(ProcessStartError) -> pid_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigfillset(&defaults)
        sigdelset(&defaults, SIGKILL)
        sigdelset(&defaults, SIGSTOP)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let arguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for pointer in arguments { free(pointer) } }
        let variables: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { for pointer in variables ?? [] { free(pointer) } }
        var pid: pid_t = 0
        let result = starting.withLock { _ in
            variables.map { posix_spawn(&pid, argv[0], &actions, &attributes, arguments, $0) }
                ?? posix_spawn(&pid, argv[0], &actions, &attributes, arguments, environ)
        }
        guard result == 0 else { throw ProcessStartError(executable: argv[0], detail: nil, code: result) }
        return pid
    }

    /// Held while `posix_spawn` runs: from its clone until the child's exec, the child holds a copy of every
    /// descriptor of this process, close-on-exec ones too.
    private static let starting = Mutex(())

    /// Runs `body` while this process starts no child. A listening socket closed while a child is being started stays
    /// open in that child until its exec, so binding its port again fails meanwhile: librdkafka 2.0.2's mock broker,
    /// taken down, re-binds its port at once and aborts the whole process when that fails.
    package static func withNoneStarting<Value, Failure: Error>(
        _ body: () throws(Failure) -> Value
    ) throws(Failure) -> Value {
        try starting.withLock { _ throws(Failure) in try body() }
    }

    /// A pipe whose ends close on exec (the child gets its end through a `dup2`, which clears that).
    private static func pipe(for executable: String) throws(ProcessStartError) -> (read: Int32, write: Int32) {
        var descriptors: [Int32] = [-1, -1]
        guard Glibc.pipe(&descriptors) == 0 else {
            throw ProcessStartError(executable: executable, detail: "cannot make a pipe", code: errno)
        }
        for descriptor in descriptors { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        return (descriptors[0], descriptors[1])
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` and `…_addchdir_np`, which Glibc's Swift module leaves out,
    /// looked up once; nil where the C library lacks them.
    private enum GlibcExtension {
        typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        typealias AddChangeDirectory = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>)
            -> Int32

        static let addCloseFrom = lookUp("posix_spawn_file_actions_addclosefrom_np", as: AddCloseFrom.self)
        static let addChangeDirectory = lookUp("posix_spawn_file_actions_addchdir_np", as: AddChangeDirectory.self)

        private static func lookUp<Function>(_ name: String, as type: Function.Type) -> Function? {
            guard let symbol = dlsym(dlopen(nil, RTLD_NOW), name) else { return nil }
            return unsafeBitCast(symbol, to: type)
        }
    }
}
