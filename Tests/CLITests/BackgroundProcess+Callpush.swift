import Foundation
import TestSupport

extension BackgroundProcess {
    /// A long-running `callpush` subcommand (kafka-mock, mock-apns, run) started for a test; with `readFirstLine`,
    /// its first stdout line is where it listens.
    convenience init(_ arguments: [String], readFirstLine: Bool = true) throws {
        try self.init(arguments, executable: CallpushProcess.executable, readFirstLine: readFirstLine)
    }
}
