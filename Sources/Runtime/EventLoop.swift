@preconcurrency import Glibc
internal import CLinuxScheduler
import Synchronization
import Telemetry

/// Something registered with an event loop for readiness events on one file descriptor.
/// All methods are called on the loop's thread.
package protocol EventLoopHandler: AnyObject {
    /// The descriptor became readable, writable, or reported an error/hang-up (`events` holds the epoll bits).
    func handleEvents(_ events: UInt32)
    /// Called once per loop turn after I/O when the handler asked for it with `EventLoop.scheduleFlush`.
    func flush()
    /// The loop is shutting down: release the descriptor and answer everything pending.
    func loopWillShutdown()
}

/// A single-threaded epoll event loop: one thread, non-blocking sockets, timers, and a cross-thread task queue.
///
/// - Important: Thread-safety contract (the reason for `@unchecked Sendable`): `execute(_:)`, `inEventLoop` and
///   `shutdown()` may be called from any thread. Every other member is confined to the loop's own thread; the
///   mutable loop state is only touched there. Cross-thread submissions go through a mutex-protected array that the
///   loop swaps out once per turn, and one coalesced `eventfd` write wakes the loop however many tasks were added.
package final class EventLoop: @unchecked Sendable {
    /// Index of this loop within its group (for logs).
    let index: Int

    private let epollFD: Int32
    private let wakeFD: Int32
    private var threadID = pthread_t()
    private let started = Atomic<Bool>(false)
    private let stopRequested = Atomic<Bool>(false)

    // Cross-thread queue.
    private let remoteTasks = Mutex<[() -> Void]>([])
    private let wakeupPending = Atomic<Bool>(false)

    // Loop-confined state.
    private var localTasks: [() -> Void] = []
    private var handlers: [Int32: any EventLoopHandler] = [:]
    private var flushList: [any EventLoopHandler] = []
    private var timers = TimerHeap()
    private var timerSequence: UInt64 = 0
    private var spareTasks: [() -> Void] = []

    /// The time slice the loop's thread asks the kernel for when it starts; nil keeps the kernel's default.
    private let timeSlice: Duration?

    init(index: Int, timeSlice: Duration?) throws(SocketError) {
        self.index = index
        self.timeSlice = timeSlice
        epollFD = epoll_create1(callpush_epoll_cloexec())
        if epollFD < 0 { throw SocketError(.eventLoopFailed, reason: "epoll_create1: \(errnoText())") }
        wakeFD = eventfd(0, callpush_efd_nonblock() | callpush_efd_cloexec())
        if wakeFD < 0 {
            close(epollFD)
            throw SocketError(.eventLoopFailed, reason: "eventfd: \(errnoText())")
        }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.fd = wakeFD
        epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, &event)
    }

    deinit {
        close(wakeFD)
        close(epollFD)
    }

    // MARK: - Thread

    func start() {
        let box = Unmanaged.passRetained(self).toOpaque()
        var tid = pthread_t()
        let result = pthread_create(&tid, nil, { argument in
            let loop = Unmanaged<EventLoop>.fromOpaque(argument!).takeRetainedValue()
            loop.run()
            return nil
        }, box)
        if result != 0 {
            Unmanaged<EventLoop>.fromOpaque(box).release()
            return
        }
        threadID = tid
        started.store(true, ordering: .releasing)
    }

    /// True when called on this loop's thread.
    package var inEventLoop: Bool {
        started.load(ordering: .acquiring) && pthread_equal(pthread_self(), threadID) != 0
    }

    func join() {
        if started.load(ordering: .acquiring) {
            pthread_join(threadID, nil)
        }
    }

    /// Asks the loop to stop after closing every registered handler. Returns at once; `EventLoopGroup.shutdown` joins.
    func shutdown() {
        stopRequested.store(true, ordering: .releasing)
        wakeup()
    }

    // MARK: - Tasks

    /// Runs `task` on the loop thread. Thread-safe. On the loop thread the task runs later in the same turn.
    package func execute(_ task: @escaping @Sendable () -> Void) {
        if inEventLoop {
            localTasks.append(task)
            return
        }
        remoteTasks.withLock { $0.append(task) }
        wakeup()
    }

    /// Like `execute` but for closures that are not `Sendable`; the caller must already be on the loop thread.
    package func executeLocal(_ task: @escaping () -> Void) {
        localTasks.append(task)
    }

    private func wakeup() {
        if !wakeupPending.exchange(true, ordering: .acquiringAndReleasing) {
            var one: UInt64 = 1
            _ = Glibc.write(wakeFD, &one, 8)
        }
    }

    // MARK: - Registration (loop thread only)

    /// The epoll bits for "readable" and "writable", for ``register(fd:handler:events:)`` and ``modify(fd:events:)``.
    package static let readableEvents: UInt32 = EPOLLIN.rawValue
    package static let writableEvents: UInt32 = EPOLLOUT.rawValue

    package func register(fd: Int32, handler: any EventLoopHandler, events: UInt32) -> Bool {
        var event = epoll_event()
        event.events = events
        event.data.fd = fd
        if epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) != 0 { return false }
        handlers[fd] = handler
        return true
    }

    package func modify(fd: Int32, events: UInt32) {
        var event = epoll_event()
        event.events = events
        event.data.fd = fd
        epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, &event)
    }

    package func deregister(fd: Int32) {
        var event = epoll_event()
        epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, &event)
        handlers[fd] = nil
    }

    /// Asks for `handler.flush()` at the end of this turn. The caller keeps its own "already scheduled" flag.
    package func scheduleFlush(_ handler: any EventLoopHandler) {
        flushList.append(handler)
    }

    // MARK: - Timers (loop thread only)

    /// Schedules `callback` at `deadline` on the loop thread. Cancel with `EventLoopTimer.cancel()`.
    /// - Important: call it on the loop thread (from a handler, a callback or ``execute(_:)``).
    @discardableResult
    package func schedule(at deadline: HTTP2Deadline, _ callback: @escaping () -> Void) -> EventLoopTimer {
        timerSequence &+= 1
        let timer = EventLoopTimer(deadline: deadline.uptimeNanoseconds, sequence: timerSequence, callback: callback)
        timers.push(timer)
        return timer
    }

    /// Runs `task` on the loop thread once `delay` has passed. Thread-safe.
    package func execute(after delay: Duration, _ task: @escaping @Sendable () -> Void) {
        let deadline = HTTP2Deadline.after(delay)
        execute { self.schedule(at: deadline, task) }
    }

    /// Runs `task` on the loop thread every `interval` (the first time one interval from now) until the returned
    /// task is cancelled. Thread-safe; the one timer mechanism for periodic work of the modules above.
    package func scheduleRepeated(every interval: Duration, _ task: @escaping @Sendable () -> Void) -> RepeatedTask {
        let repeated = RepeatedTask()
        let period = max(interval, .milliseconds(1))
        execute { self.scheduleNextRun(of: repeated, after: period, task) }
        return repeated
    }

    private func scheduleNextRun(of repeated: RepeatedTask, after period: Duration, _ task: @escaping @Sendable () -> Void) {
        guard !repeated.isCancelled else { return }
        schedule(at: .after(period)) { [self] in
            guard !repeated.isCancelled else { return }
            task()
            scheduleNextRun(of: repeated, after: period, task)
        }
    }

    // MARK: - Run loop

    private func run() {
        ThreadName.setCurrent("http2-loop-\(index)")
        // Best effort (see ``EventLoopGroup/init(numberOfThreads:timeSlice:)``): a refusal leaves the kernel's default.
        if let timeSlice { _ = callpush_request_time_slice(UInt64(clamping: timeSlice.nanoseconds)) }
        let capacity = 256
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: capacity)
        defer { events.deallocate() }
        while !stopRequested.load(ordering: .acquiring) {
            var timeout: Int32 = -1
            if !localTasks.isEmpty || !flushList.isEmpty {
                timeout = 0
            } else if let next = timers.peek() {
                let now = HTTP2Deadline.now().uptimeNanoseconds
                if next.deadline <= now {
                    timeout = 0
                } else {
                    let millis = (next.deadline - now + 999_999) / 1_000_000
                    timeout = Int32(min(millis, 60_000))
                }
            }
            let count = epoll_wait(epollFD, events, Int32(capacity), timeout)
            if count > 0 {
                for i in 0..<Int(count) {
                    let fd = events[i].data.fd
                    if fd == wakeFD {
                        var value: UInt64 = 0
                        _ = Glibc.read(wakeFD, &value, 8)
                        continue
                    }
                    handlers[fd]?.handleEvents(events[i].events)
                }
            }
            runTimers()
            runTasks()
            runFlushes()
        }
        // Shut down: close everything registered, run what is left.
        runTasks()
        for handler in Array(handlers.values) { handler.loopWillShutdown() }
        runTasks()
        runFlushes()
        handlers.removeAll()
        while timers.pop() != nil {}
    }

    private func runTimers() {
        guard timers.peek() != nil else { return }
        let now = HTTP2Deadline.now().uptimeNanoseconds
        while let next = timers.peek(), next.deadline <= now {
            _ = timers.pop()
            if let callback = next.callback {
                next.cancel()
                callback()
            }
        }
    }

    private func runTasks() {
        if wakeupPending.load(ordering: .relaxed) {
            wakeupPending.store(false, ordering: .releasing)
            swap(&spareTasks, &localTasks)  // keep local order: remote tasks after earlier local ones
            let remote = remoteTasks.withLock { tasks -> [() -> Void] in
                let taken = tasks
                tasks.removeAll(keepingCapacity: true)
                return taken
            }
            localTasks = spareTasks
            spareTasks = []
            localTasks.append(contentsOf: remote)
        }
        var rounds = 0
        while !localTasks.isEmpty && rounds < 4 {
            var batch: [() -> Void] = []
            swap(&batch, &localTasks)
            for task in batch { task() }
            rounds += 1
        }
    }

    private func runFlushes() {
        var rounds = 0
        while !flushList.isEmpty && rounds < 4 {
            var batch: [any EventLoopHandler] = []
            swap(&batch, &flushList)
            for handler in batch { handler.flush() }
            rounds += 1
        }
    }
}

/// A one-shot timer of one ``EventLoop``; used and cancelled on that loop's thread only.
///
/// Its callback is released as soon as the timer fires or is cancelled. Owners keep their timers (a connection's
/// ping, connect and deadline timers) and the callbacks capture the owner: holding a spent callback made a cycle
/// that kept every closed HTTP/2 client connection, with its nghttp2 session memory and TLS context, alive for good.
package final class EventLoopTimer {
    let deadline: UInt64
    let sequence: UInt64
    /// Nil once the timer fired or was cancelled.
    private(set) var callback: (() -> Void)?

    init(deadline: UInt64, sequence: UInt64, callback: @escaping () -> Void) {
        self.deadline = deadline
        self.sequence = sequence
        self.callback = callback
    }

    /// True once the timer fired or was cancelled.
    var isCancelled: Bool { callback == nil }

    package func cancel() { callback = nil }
}

/// A binary min-heap of timers ordered by deadline, then insertion order.
struct TimerHeap {
    private var items: [EventLoopTimer] = []

    func peek() -> EventLoopTimer? { items.first }

    private static func less(_ a: EventLoopTimer, _ b: EventLoopTimer) -> Bool {
        a.deadline != b.deadline ? a.deadline < b.deadline : a.sequence < b.sequence
    }

    mutating func push(_ timer: EventLoopTimer) {
        items.append(timer)
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            if !Self.less(items[child], items[parent]) { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> EventLoopTimer? {
        guard !items.isEmpty else { return nil }
        items.swapAt(0, items.count - 1)
        let top = items.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < items.count && Self.less(items[left], items[smallest]) { smallest = left }
            if right < items.count && Self.less(items[right], items[smallest]) { smallest = right }
            if smallest == parent { break }
            items.swapAt(parent, smallest)
            parent = smallest
        }
        return top
    }
}

package func errnoText(_ code: Int32 = errno) -> String {
    String(cString: strerror(code))
}
