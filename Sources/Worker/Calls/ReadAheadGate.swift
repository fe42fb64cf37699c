import Synchronization

/// Holds back `incoming` events of a newly assigned partition until the worker has read through the records that
/// were already in the log at assignment (a replay after a crash or rebalance, or a backlog), so a stop event
/// further on in that range is known before the phone rings.
///
/// Lanes are partition numbers: the calls topic and every retry tier share them (retry records keep their
/// partition number), so lane *p* gathers the calls partition *p* and the retry-tier partitions *p*.
///
/// Rules, per lane from its assignment:
/// - The lane's end is the calls partition's high watermark at assignment (from its first record). An `incoming`
///   event of the lane (calls topic or retry tier) is held while the calls partition has not delivered the record
///   just below that end; every other event passes at once.
/// - Once that record arrives, the held events are released in order, before it, and nothing is held again.
/// - Scanning (when ``Configuration/scansBacklog``): the verdict of a lane's first record asks the caller to scan
///   the calls partition's backlog, `[that record's offset, end)`, for stop events (``Verdict/scan``) beside the
///   consumer. Once the caller has marked those calls ended and reports the scan complete
///   (``scanFinished(lane:generation:completed:)``), the held events are released and nothing is held again; they and
///   every later event meet the marks, whatever the backlog's length. Reading through the backlog first ends the
///   read-ahead as before.
/// - Bounds: a lane holding ``Configuration/maxHeldPerPartition`` events, or all lanes together
///   ``Configuration/maxHeld``, release what they hold (and keep reading ahead) — except lanes whose scan is under
///   way, which hold on (the consumer pauses their partitions at its in-flight limits; the scan does not need them);
///   a lane whose calls partition delivers nothing for ``Configuration/timeout`` while it holds events, and no scan
///   is under way, releases them and stops holding (the caller asks with ``expire(lane:epoch:)``). A scan that fails
///   turns its lane back into a bounded read-ahead.
/// - A revoked lane returns what it holds: the caller gives those events back unprocessed, so the partition's
///   next owner reads ahead through them itself.
///
/// - Important: thread-safe; all state is behind one `Mutex`, and it never calls out.
final class ReadAheadGate<Item: Sendable>: Sendable {
    typealias Configuration = ReadAheadConfiguration

    /// What to do after ``offer(_:lane:offset:isCallsTopic:highWatermark:isIncoming:)``.
    struct Verdict: Sendable {
        /// Held events to admit now, in order, before the offered one (which may be among them).
        var released: [Item] = []
        /// The offered event goes now, after ``released``; false when it is held or among ``released``.
        var passes: Bool
        /// Set when the offered event is the lane's first held one: call ``expire(lane:epoch:)`` with it after
        /// ``Configuration/timeout``.
        var timerEpoch: UInt64?
        /// ``released`` are let go early: a lane (or all lanes together) held as many as the limits allow before
        /// the lane had read through its backlog.
        var releasedAtLimit = false
        /// Set on a lane's first record when it has a backlog: scan it for stop events, then call
        /// ``ReadAheadGate/scanFinished(lane:generation:completed:)``.
        var scan: Scan?
    }

    /// A calls partition's backlog to scan for stop events: offsets `from ..< to` of the lane's assignment
    /// `generation`.
    struct Scan: Sendable, Hashable {
        var from: Int64
        var to: Int64
        var generation: UInt64
    }

    private struct Lane {
        /// The calls partition's high watermark at assignment; nil until its first record.
        var end: Int64?
        var caughtUp = false
        /// When the calls partition last delivered a record (or the lane was assigned).
        var lastProgress = ContinuousClock.now
        /// Changes whenever the held events are let go, so a stale timer finds nothing to do.
        var epoch: UInt64 = 0
        /// Tells this assignment of the lane from earlier and later ones (a late scan result finds nothing to do).
        var generation: UInt64
        /// A backlog scan is under way: the limits do not let the held events go.
        var scanning = false
    }

    private struct State {
        var lanes: [Int32: Lane] = [:]
        /// Held events per lane, apart from the lanes so appending never copies them.
        var held: [Int32: [Item]] = [:]
        var heldTotal = 0
        var nextEpoch: UInt64 = 1
    }

    let configuration: Configuration
    private let state = Mutex(State())

    init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// The calls topic's partitions `lanes` were assigned: they read ahead from now on.
    func assign(lanes: [Int32]) -> [Item] {
        guard !configuration.disabled else { return [] }
        return state.withLock { state in
            var released: [Item] = []
            for lane in lanes {
                released += Self.takeHeld(lane, in: &state)
                state.lanes[lane] = Lane(generation: state.nextEpoch)
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
                released += Self.takeHeld(lane, in: &state)
                state.lanes[lane] = nil
            }
            return released
        }
    }

    /// Returns every held event and stops reading ahead (shutdown: they are given back unprocessed).
    func releaseAll() -> [Item] {
        state.withLock { state in
            var released: [Item] = []
            for lane in state.lanes.keys.sorted() {
                released += Self.takeHeld(lane, in: &state)
                state.lanes[lane]?.caughtUp = true
                state.lanes[lane]?.scanning = false
            }
            return released
        }
    }

    /// Decides about one decoded event.
    /// - Parameters:
    ///   - lane: the record's partition number.
    ///   - isCallsTopic: the record comes from the calls topic (its offsets measure the read-ahead).
    ///   - highWatermark: the record's partition high watermark at assignment, if known.
    ///   - isIncoming: the event would make a phone ring.
    func offer(
        _ item: Item, lane: Int32, offset: Int64, isCallsTopic: Bool, highWatermark: Int64?, isIncoming: Bool
    ) -> Verdict {
        state.withLock { state in
            guard var current = state.lanes[lane], !current.caughtUp else { return Verdict(passes: true) }
            var scan: Scan?
            if isCallsTopic {
                current.lastProgress = .now
                if current.end == nil {
                    let end = highWatermark ?? 0
                    current.end = end
                    if configuration.scansBacklog && offset + 1 < end {
                        current.scanning = true
                        scan = Scan(from: offset, to: end, generation: current.generation)
                    }
                }
                if offset + 1 >= current.end! {
                    current.caughtUp = true
                    current.scanning = false
                    state.lanes[lane] = current
                    return Verdict(released: Self.takeHeld(lane, in: &state), passes: true)
                }
            }
            guard isIncoming else {
                state.lanes[lane] = current
                return Verdict(passes: true, scan: scan)
            }
            state.held[lane, default: []].append(item)
            state.heldTotal += 1
            let count = state.held[lane]!.count
            var timerEpoch: UInt64?
            if count == 1 {
                current.epoch = state.nextEpoch
                state.nextEpoch += 1
                timerEpoch = current.epoch
            }
            state.lanes[lane] = current
            if count >= configuration.maxHeldPerPartition && !current.scanning {
                return Verdict(released: Self.takeHeld(lane, in: &state), passes: false, releasedAtLimit: true, scan: scan)
            }
            if state.heldTotal >= configuration.maxHeld {
                var released: [Item] = []
                for other in state.held.keys.sorted() where state.lanes[other]?.scanning != true {
                    released += Self.takeHeld(other, in: &state)
                }
                if !released.isEmpty {
                    let stillHeld = state.held[lane] != nil
                    return Verdict(released: released, passes: false, timerEpoch: stillHeld ? timerEpoch : nil,
                                   releasedAtLimit: true, scan: scan)
                }
            }
            return Verdict(passes: false, timerEpoch: timerEpoch, scan: scan)
        }
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
            let idle = ContinuousClock.now - current.lastProgress
            if idle < configuration.timeout { return .later(configuration.timeout - idle) }
            state.lanes[lane]?.caughtUp = true
            return .released(Self.takeHeld(lane, in: &state))
        }
    }

    /// Whether the scan of `lane`'s assignment `generation` is still wanted (the lane has not read through its
    /// backlog, nor been revoked or assigned again).
    func isScanning(lane: Int32, generation: UInt64) -> Bool {
        state.withLock { state in
            guard let current = state.lanes[lane] else { return false }
            return current.generation == generation && current.scanning
        }
    }

    /// The scan of `lane`'s backlog ended. `completed`: every stop event in it is known (the caller marked those
    /// calls ended), so the lane stops reading ahead and its held events are released. Otherwise the lane goes on as
    /// a bounded read-ahead (``Verdict/releasedAtLimit`` if it already holds as many as its limit allows). A result
    /// for an earlier assignment, or after the lane read through its backlog, finds nothing to do.
    func scanFinished(lane: Int32, generation: UInt64, completed: Bool) -> Verdict {
        state.withLock { state in
            guard var current = state.lanes[lane], current.generation == generation, current.scanning else {
                return Verdict(passes: false)
            }
            current.scanning = false
            if completed { current.caughtUp = true }
            state.lanes[lane] = current
            if completed { return Verdict(released: Self.takeHeld(lane, in: &state), passes: false) }
            guard (state.held[lane]?.count ?? 0) >= configuration.maxHeldPerPartition else { return Verdict(passes: false) }
            return Verdict(released: Self.takeHeld(lane, in: &state), passes: false, releasedAtLimit: true)
        }
    }

    /// Events held over all lanes (for gauges and tests).
    var heldCount: Int { state.withLock { $0.heldTotal } }

    private static func takeHeld(_ lane: Int32, in state: inout State) -> [Item] {
        guard let held = state.held.removeValue(forKey: lane) else { return [] }
        state.lanes[lane]?.epoch = state.nextEpoch
        state.nextEpoch += 1
        state.heldTotal -= held.count
        return held
    }
}
