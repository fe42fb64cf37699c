import Synchronization
import Telemetry

// The read-ahead's side of the dispatcher: backlog and history scans, the hold's timeout, and what a
// rebalance gives back. Scans report on the `kafka-range` thread, timeouts on an event loop, the rest on the poll thread.
extension Dispatcher {
    /// Scans a part of a calls partition the read-ahead asked for: each stop event in it marks its call ended in the
    /// tracker; once the scan is complete the read-ahead lets the events it held for it go, and they (and every later
    /// one) meet those marks. A backlog scan covers what the partition held at assignment, however long; a history
    /// scan what lies before it, for retry records whose hang-up the partition's previous owner may have sent.
    func scan(_ scan: ReadAheadScan) {
        guard let scanner else { return }
        let started = ContinuousClock.now
        let tally = ScanTally()
        let topic = configuration.callsTopic
        scanner.scan(topic: topic, partition: scan.lane, from: scan.from, to: scan.to) { [weak self] value in
            guard let self else { return false }
            entries.note(.scanRecord)
            guard gate.isScanning(scan) else { return false }
            tally.records.add(1, ordering: .relaxed)
            if StopTypeProbe.mayStopRinging(value), let event = try? decoder.decode(value), event.type.stopsRinging {
                tracker.markEnded(event.callKey)
                tally.endedCalls.add(1, ordering: .relaxed)
            }
            return true
        } finished: { [weak self] outcome in
            guard let self else { return }
            entries.note(.scanEnd)
            let verdict = gate.scanFinished(scan, completed: outcome.result == .completed)
            let seconds = (ContinuousClock.now - started).inSeconds
            let records = tally.records.load(ordering: .relaxed), endedCalls = tally.endedCalls.load(ordering: .relaxed)
            metrics.readAheadScans[scan.kind]?[outcome.result]?.increment()
            metrics.readAheadScanDuration[scan.kind]?.observe(seconds)
            metrics.readAheadScanEndedCalls.increment(by: endedCalls)
            var metadata: Logger.Metadata = [
                "kafka.topic": topic, "kafka.partition": String(scan.lane),
                "kafka.offsets": "\(scan.from)..<\(scan.to.map(String.init) ?? "high watermark")",
                "read_ahead.scan": scan.kind.rawValue, "read_ahead.scanned": String(records),
                "read_ahead.ended_calls": String(endedCalls), "read_ahead.held": String(verdict.released.count),
                "read_ahead.ms": String(Int(seconds * 1000)),
            ]
            switch outcome.result {
            case .completed: logger.info("\(scan.kind.rawValue) scanned for hang-ups", metadata: metadata)
            case .stopped: logger.debug("\(scan.kind.rawValue) scan stopped: read through or revoked first", metadata: metadata)
            case .failed:
                metadata["error"] = outcome.failure ?? "unknown"
                logger.warning(scan.kind == .backlog
                    ? "backlog scan failed; the read-ahead is bounded by its limits"
                    : "history scan failed; its retry records go without it", metadata: metadata)
            }
            admitReleased(verdict)
            if let next = verdict.scan { self.scan(next) }
        }
    }

    /// What one scan read.
    private final class ScanTally: Sendable {
        let records = Atomic<Int>(0)
        let endedCalls = Atomic<Int>(0)
    }

    /// Admits what a verdict of the read-ahead released.
    private func admitReleased(_ verdict: ReadAheadGate<Pending>.Verdict) {
        for pending in released(by: verdict) { admit(pending) }
    }

    /// Admits events the read-ahead held.
    private func admitReleased(_ released: [Pending]) {
        for pending in released {
            pending.markLookedAhead()
            admit(pending)
        }
    }

    /// The events a verdict of the read-ahead let go, counted by reason when they go early, and marked: a cancellation
    /// of one of them is the look-ahead's doing.
    func released(by verdict: ReadAheadGate<Pending>.Verdict) -> [Pending] {
        if let reason = verdict.releasedEarly { metrics.readAheadReleasedEarly[reason]?.increment(by: verdict.released.count) }
        for pending in verdict.released { pending.markLookedAhead() }
        return verdict.released
    }

    func scheduleExpiry(lane: Int32, epoch: UInt64, after delay: Duration? = nil) {
        let wait = delay ?? gate.configuration.timeout
        // Weak: a worker shut down meanwhile has nothing left to release, and must not be kept alive until then.
        timers.execute(after: wait) { [weak self] in
            guard let self else { return }
            entries.note(.timer)
            switch gate.expire(lane: lane, epoch: epoch) {
            case .nothing: break
            case .later(let remaining): scheduleExpiry(lane: lane, epoch: epoch, after: remaining)
            case .released(let held):
                metrics.readAheadReleasedEarly[.timeout]?.increment(by: held.count)
                admitReleased(held)
            }
        }
    }

    /// The calls topic's partitions `lanes` were assigned to this worker: their backlog is read ahead.
    func assigned(lanes: [Int32]) {
        entries.note(.rebalance)
        giveBack(gate.assign(lanes: lanes))
    }

    /// `lanes` were revoked: events the read-ahead held are given back unprocessed, so the partition's next owner
    /// reads ahead through them itself (sending them now could ring a call whose hang-up this worker has not read).
    func revoked(lanes: [Int32]) {
        entries.note(.rebalance)
        giveBack(gate.revoke(lanes: lanes))
    }

    /// Gives back every event the read-ahead holds and stops reading ahead (the start of a graceful shutdown).
    func giveBackHeld() {
        giveBack(gate.releaseAll())
    }

    private func giveBack(_ held: [Pending]) {
        for pending in held { pending.giveBack() }
    }
}
