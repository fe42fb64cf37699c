import Foundation
import ToolSupport

/// Area `groups`: calls through two and three `callpush run` processes while the consumer group changes
/// (`scripts/group-changes.py`: scale-out, scale-in, a rolling restart one worker at a time, SIGKILL with and without
/// a restart, each group of phases on a fresh mock cluster), their waits split into the partitions that moved in each
/// phase and those that did not. The reference is the same run's
/// steady phase: a partition that does not move must not notice the change (p99 ≤ 2 × steady p99), a moved partition
/// waits at most the rebalance a joining worker measures (its join request to its assignment) and half a second, and
/// a moved partition of a killed worker waits at most the session timeout and a second.
enum GroupsArea {
    /// `--kafka-session-timeout` of the script's workers.
    static let sessionTimeoutMilliseconds = 6_000.0

    static func run(_ options: BenchOptions) async -> AreaResult {
        var result = AreaResult()
        let script = FileManager.default.currentDirectoryPath + "/scripts/group-changes.py"
        let callpush = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("callpush").path
        guard FileManager.default.fileExists(atPath: script), FileManager.default.isExecutableFile(atPath: callpush) else {
            print("  SKIP groups: run from the package root with callpush built (\(script), \(callpush))")
            return result
        }
        // A phase must hold a killed worker's session timeout and the mock's rebalance (about 11 s) with room to spare.
        let phase = String(max(20, Int(options.seconds * 4)))
        let output: String
        do {
            let child = try ChildProcess(["python3", script, "cooperative", phase],
                                         environment: ProcessInfo.processInfo.environment.merging(["BIN": callpush]) { $1 })
            child.wait(timeout: .seconds(900))
            output = child.log
        } catch {
            print("  FAILED groups: \(error)")
            return result
        }
        for line in output.split(separator: "\n") where !line.hasPrefix("{") { print("  \(line)") }
        guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix("{") }),
            let run = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let phases = run["phases"] as? [[String: Any]], let steady = phases.first,
            let steadyP99 = (steady["kept"] as? [String: Any])?["p99_ms"] as? Double
        else {
            print("  FAILED groups: no result: \(output.suffix(400))")
            return result
        }
        for entry in phases.dropFirst() {
            let name = entry["phase"] as? String ?? "?"
            if let kept = entry["kept"] as? [String: Any], let p99 = kept["p99_ms"] as? Double {
                result.report(BenchRatio(area: .groups, name: "\(name): p99 of partitions that did not move vs steady p99",
                                         value: p99, reference: steadyP99, target: .atMost(2.0)))
            }
            // A joining worker's wait from its join request to its assignment is the group protocol's part; the
            // moved partitions may wait that and half a second of ours (hand-over, backlog scan).
            if let join = entry["join_ms"] as? Double, let moved = entry["moved"] as? [String: Any],
               let p99 = moved["p99_ms"] as? Double {
                result.report(BenchRatio(area: .groups, name: "\(name): p99 of moved partitions vs the join's rebalance + 0.5 s",
                                         value: p99, reference: join + 500, target: .atMost(1.0)))
            }
            if name.hasPrefix("SIGKILL"), let moved = entry["moved"] as? [String: Any], let longest = moved["max_ms"] as? Double {
                result.report(BenchRatio(area: .groups, name: "\(name): longest wait of moved partitions vs session timeout + 1 s",
                                         value: longest, reference: sessionTimeoutMilliseconds + 1000, target: .atMost(1.0)))
            }
        }
        let lost = run["lost"] as? Int ?? -1, rings = run["rings_after_hang_up"] as? Int ?? -1
        result.notes.append("groups: lost \(lost), rings after hang-up \(rings), duplicate receipts \(run["duplicates"] as? Int ?? -1) "
            + "of \(run["events"] as? Int ?? 0) events\(lost == 0 && rings == 0 ? "" : " — NOT met: both must be 0")")
        return result
    }
}
