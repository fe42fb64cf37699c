import Telemetry
import Synchronization

/// Holds back `incoming` events of a newly assigned partition until the worker has read through the records that
/// were already in the log at assignment (a replay after a crash or rebalance, or a backlog), so a stop event
/// further on in that range is known before the phone rings. Lanes are partition numbers, shared by the calls topic
/// and every retry tier.
///
/// Rules: docs/call-handling.md, section "Read-ahead of a newly assigned partition (ReadAheadGate)".
///
/// - Important: thread-safe; all state is behind one `Mutex`, and it never calls out.
final class ReadAheadGate<Item: ReadAheadItem>: Sendable {
    typealias Configuration = ReadAheadConfiguration
    typealias Scan = ReadAheadScan

    /// What to do with one offered event (``offer(_:)``).
    struct Verdict: Sendable {
        /// Held events to admit now, in order, before the offered one (which may be among them).
        var released: [Item] = []
        /// The offered event goes now, after ``released``; false when it is held or among ``released``.
        var passes: Bool
        /// Set when the offered event is the lane's first held one: call ``expire(lane:epoch:)`` with it after
        /// ``Configuration/timeout``.
        var timerEpoch: UInt64?
        /// Why ``released`` are let go early, if they are: ``ReadAheadCutShort/limit``, a lane (or all lanes
        /// together) held as many as the limits allow before the lane had read through its backlog;
        /// ``ReadAheadCutShort/historyScanFailed``, retry-tier records whose history scan failed (a hang-up before the
        /// lane's own reading that the partition's previous owner sent is not known).
        var releasedEarly: ReadAheadCutShort?
        /// A scan to start: scan the calls partition for stop events, mark those calls ended, then call
        /// ``ReadAheadGate/scanFinished(_:completed:)``.
        var scan: Scan?
    }

    private struct Lane {
        /// The calls partition's high watermark at assignment; nil until its first record.
        var end: Int64?
        var caughtUp = false
        /// When the calls partition last delivered a record (or the lane was assigned): the gate's monotonic clock,
        /// nanoseconds.
        var lastProgress: UInt64
        /// Changes whenever the held events are let go, so a stale timer finds nothing to do.
        var epoch: UInt64 = 0
        /// Tells this assignment of the lane from earlier and later ones (a late scan result finds nothing to do).
        var generation: UInt64
        /// A backlog scan is under way or waiting for ``active``: the limits do not let the held events go.
        var scanning = false
        /// The offset of the calls partition's first record since the assignment: the consumer (and the backlog
        /// scan) read every stop event from it on.
        var first: Int64?
        /// Stop events of the calls partition from this offset on, up to past the high watermark at assignment, are
        /// known (history scans).
        var known: Int64?
        /// The scan the caller runs for this lane (one at a time).
        var active: Scan?
        /// A backlog scan waiting for ``active`` to end.
        var waitingBacklog: Scan?
    }

    /// A retry-tier `incoming` record waiting for a history scan down to `origin`.
    private struct HeldRetry {
        var item: Item
        var origin: Int64
    }

    private struct State {
        var lanes = LaneTable<Lane>()
        /// Held events per lane, apart from the lanes so appending never copies them.
        var held = LaneTable<[Item]>()
        var heldTotal = 0
        /// Retry-tier records held for a history scan, per lane (beside ``held``: the limits do not count them).
        var heldForHistory = LaneTable<[HeldRetry]>()
        var nextEpoch: UInt64 = 1
    }

    let configuration: Configuration
    private let clock: any MonotonicClock
    private let state = Mutex(State())

    /// - Parameter clock: measures a lane's time without progress (a test's clock lets the timeout pass at once).
    init(configuration: Configuration = Configuration(), clock: any MonotonicClock = SystemMonotonicClock()) {
        self.configuration = configuration
        self.clock = clock
    }

    /// The calls topic's partitions `lanes` were assigned: they read ahead from now on.
    func assign(lanes: [Int32]) -> [Item] {
        guard !configuration.disabled else { return [] }
        return state.withLock { state in
            var released: [Item] = []
            for lane in lanes {
                released += Self.takeAll(lane, in: &state)
                state.lanes[lane] = Lane(lastProgress: clock.uptimeNanoseconds(), generation: state.nextEpoch)
                state.nextEpoch += 1
            }
            return released
        }
    }

    /// `lanes` were revoked: returns what they held (to give back unprocessed).
    func revoke(lanes: [Int32]) -> [Item] {
        state.withLock { state in
            var released: [Item] = []
            for lane in lanes {
                released += Self.takeAll(lane, in: &state)
                state.lanes[lane] = nil
            }
            return released
        }
    }

    /// Returns every held event and stops reading ahead (shutdown: they are given back unprocessed).
    func releaseAll() -> [Item] {
        state.withLock { state in
            var released: [Item] = []
            for lane in state.lanes.lanes { released += Self.takeAll(lane, in: &state) }
            state.lanes.removeAll()
            return released
        }
    }

    /// Decides about the events of one consumed batch (or part of one), in order, under one lock.
    func offer(_ batch: some Collection<Item>) -> [Verdict] {
        state.withLock { state in batch.map { decide($0, in: &state) } }
    }

    private func decide(_ item: Item, in state: inout State) -> Verdict {
        let lane = item.lane, offset = item.offset, isCallsTopic = item.isCallsTopic, isIncoming = item.isIncoming
        guard var current = state.lanes[lane] else { return Verdict(passes: true) }
        if isIncoming, !isCallsTopic, configuration.scansBacklog, var origin = item.origin {
            // No further back than the history reach before the lane's first record.
            if let first = current.first { origin = max(origin, first.saturatingAdd(-configuration.historyReach)) }
            if let known = current.known, origin >= known { return Verdict(passes: true) }
            if current.first.map({ origin < $0 }) ?? true {
                _ = state.heldForHistory.append(HeldRetry(item: item, origin: origin), toLane: lane)
                let scan = current.active == nil ? Self.nextHistoryScan(lane, for: &current, in: state) : nil
                state.lanes[lane] = current
                return Verdict(passes: false, scan: scan)
            }
        }
        guard !current.caughtUp else { return Verdict(passes: true) }
        var scan: Scan?
        if isCallsTopic {
            current.lastProgress = clock.uptimeNanoseconds()
            if current.end == nil {
                let end = item.highWatermark ?? 0
                current.end = end
                current.first = offset
                if configuration.scansBacklog && offset + 1 < end {
                    current.scanning = true
                    let backlog = Scan(kind: .backlog, lane: lane, from: offset, to: end, generation: current.generation)
                    if current.active == nil {
                        current.active = backlog
                        scan = backlog
                    } else {
                        current.waitingBacklog = backlog
                    }
                }
            }
            if offset + 1 >= current.end! {
                current.caughtUp = true
                current.scanning = false
                current.waitingBacklog = nil
                state.lanes[lane] = current
                return Verdict(released: Self.takeHeld(lane, in: &state), passes: true)
            }
        }
        guard isIncoming else {
            state.lanes[lane] = current
            return Verdict(passes: true, scan: scan)
        }
        let count = state.held.append(item, toLane: lane)
        state.heldTotal += 1
        var timerEpoch: UInt64?
        if count == 1 {
            current.epoch = state.nextEpoch
            state.nextEpoch += 1
            timerEpoch = current.epoch
        }
        state.lanes[lane] = current
        if count >= configuration.maxHeldPerPartition && !current.scanning {
            return Verdict(released: Self.takeHeld(lane, in: &state), passes: false, releasedEarly: .limit, scan: scan)
        }
        if state.heldTotal >= configuration.maxHeld {
            var released: [Item] = []
            for other in state.held.lanes where state.lanes[other]?.scanning != true {
                released += Self.takeHeld(other, in: &state)
            }
            if !released.isEmpty {
                let stillHeld = state.held[lane] != nil
                return Verdict(released: released, passes: false, timerEpoch: stillHeld ? timerEpoch : nil,
                               releasedEarly: .limit, scan: scan)
            }
        }
        return Verdict(passes: false, timerEpoch: timerEpoch, scan: scan)
    }

    /// The history scan `lane` needs next (and makes it the lane's active one), if it holds retry records: from the
    /// oldest held origin to what is already known, or to the high watermark for the lane's first.
    private static func nextHistoryScan(_ number: Int32, for lane: inout Lane, in state: State) -> Scan? {
        guard let oldest = state.heldForHistory[number]?.lazy.map(\.origin).min() else { return nil }
        let scan = Scan(kind: .history, lane: number, from: oldest, to: lane.known, generation: lane.generation)
        lane.active = scan
        return scan
    }

    /// What a lane's timer finds.
    enum Expiry: Sendable {
        /// Nothing to do (the events were let go meanwhile, or the lane is gone).
        case nothing
        /// The calls partition made progress since: look again after this long.
        case later(Duration)
        /// No progress for ``ReadAheadConfiguration/timeout``: the lane stops reading ahead; admit these.
        case released([Item])
    }

    /// The timer of a lane's held events ran out: if they are still held (same `epoch`) and the calls partition
    /// delivered nothing for ``ReadAheadConfiguration/timeout``, the lane stops reading ahead and returns them.
    func expire(lane: Int32, epoch: UInt64) -> Expiry {
        state.withLock { state in
            guard let current = state.lanes[lane], current.epoch == epoch, state.held[lane] != nil else { return .nothing }
            // The scan decides (and fails after its own stall timeout); its partition may be paused meanwhile.
            if current.scanning { return .later(configuration.timeout) }
            let idle = Duration.nanoseconds(Int64(clamping: clock.uptimeNanoseconds() &- current.lastProgress))
            if idle < configuration.timeout { return .later(configuration.timeout - idle) }
            state.lanes[lane]?.caughtUp = true
            return .released(Self.takeHeld(lane, in: &state))
        }
    }

    /// Whether `scan` is still wanted: its lane has not been revoked or assigned again, and for a backlog scan, has
    /// not read through its backlog.
    func isScanning(_ scan: Scan) -> Bool {
        state.withLock { state in
            guard let current = state.lanes[scan.lane], current.generation == scan.generation, current.active == scan
            else { return false }
            return scan.kind == .history || current.scanning
        }
    }

    /// `scan` ended; `completed`: every stop event in it is known (the caller marked those calls ended).
    ///
    /// A complete backlog scan ends the lane's read-ahead (its held events are released); an incomplete one turns the
    /// lane into a bounded read-ahead (releasing what it holds early, ``ReadAheadCutShort/limit``, if that is as many
    /// as its limit allows). A complete history scan releases the retry records whose origin it reached; a failed one
    /// releases all of them (``ReadAheadCutShort/historyScanFailed``). The verdict may ask for the lane's next scan. A
    /// result for an earlier assignment finds nothing to do.
    func scanFinished(_ scan: Scan, completed: Bool) -> Verdict {
        state.withLock { state in
            guard var current = state.lanes[scan.lane], current.generation == scan.generation, current.active == scan else {
                return Verdict(passes: false)
            }
            current.active = nil
            var verdict = Verdict(passes: false)
            var releaseHeld = false
            switch scan.kind {
            case .backlog where current.scanning:
                current.scanning = false
                if completed { current.caughtUp = true }
                releaseHeld = completed || (state.held[scan.lane]?.count ?? 0) >= configuration.maxHeldPerPartition
                if releaseHeld && !completed { verdict.releasedEarly = .limit }
            case .backlog:
                break
            case .history:
                if completed { current.known = scan.from }
                let held = state.heldForHistory.removeValue(forLane: scan.lane) ?? []
                let going = completed ? held.filter { $0.origin >= scan.from } : held
                let staying = completed ? held.filter { $0.origin < scan.from } : []
                verdict.released = going.map(\.item)
                if !completed && !going.isEmpty { verdict.releasedEarly = .historyScanFailed }
                if !staying.isEmpty { state.heldForHistory[scan.lane] = staying }
            }
            if let waiting = current.waitingBacklog {
                current.waitingBacklog = nil
                if current.scanning {
                    current.active = waiting
                    verdict.scan = waiting
                }
            }
            if verdict.scan == nil { verdict.scan = Self.nextHistoryScan(scan.lane, for: &current, in: state) }
            state.lanes[scan.lane] = current
            if releaseHeld { verdict.released = Self.takeHeld(scan.lane, in: &state) }
            return verdict
        }
    }

    /// Events held over all lanes (for gauges and tests).
    var heldCount: Int { state.withLock { $0.heldTotal + $0.heldForHistory.values.reduce(0) { $0 + $1.count } } }

    /// Everything `lane` holds, for a history scan too (revoked, assigned again, shut down).
    private static func takeAll(_ lane: Int32, in state: inout State) -> [Item] {
        let retries = state.heldForHistory.removeValue(forLane: lane) ?? []
        return takeHeld(lane, in: &state) + retries.map(\.item)
    }

    /// What `lane` holds for its read-ahead.
    private static func takeHeld(_ lane: Int32, in state: inout State) -> [Item] {
        guard let held = state.held.removeValue(forLane: lane) else { return [] }
        state.lanes[lane]?.epoch = state.nextEpoch
        state.nextEpoch += 1
        state.heldTotal -= held.count
        return held
    }
}
