import Foundation
import TestSupport

/// The receipts `callpush run --kafka-receipts` wrote to the outcomes topic, read from the beginning with kcat (an
/// independent consumer): one JSON object per record, in partition order.
enum OutcomeReceipts {
    static func read(brokers: String, topic: String = "calls.outcomes") throws -> [[String: Any]] {
        let read = try ExternalTool.run(["kcat", "-b", brokers, "-C", "-t", topic, "-e", "-q", "-f", "%s\n"], timeout: 60)
        return read.output.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }
}
