internal import CRdKafka

/// An error from librdkafka or from this module's own bookkeeping.
///
/// `code` is extensible (a struct with static lets, not an enum); `name` and `reason` are librdkafka's
/// error name (`rd_kafka_err2name`) and human-readable string (`rd_kafka_err2str` or the event's text).
package struct KafkaError: Error, Sendable, CustomStringConvertible {
    /// A librdkafka error code (`rd_kafka_resp_err_t`), or one of this module's own codes (positive values above
    /// 100000).
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        let rawValue: Int32

        init(rawValue: Int32) { self.rawValue = rawValue }

        // librdkafka local errors (negative) and broker errors (positive), by their rdkafka.h values.
        static let noError = Code(rawValue: 0)
        static let badMessage = Code(rawValue: -199)
        static let destroy = Code(rawValue: -197)
        static let fail = Code(rawValue: -196)
        package static let transport = Code(rawValue: -195)
        static let allBrokersDown = Code(rawValue: -187)
        static let messageTimedOut = Code(rawValue: -192)
        static let unknownPartition = Code(rawValue: -190)
        static let unknownTopic = Code(rawValue: -188)
        static let invalidArgument = Code(rawValue: -186)
        static let timedOut = Code(rawValue: -185)
        package static let queueFull = Code(rawValue: -184)
        package static let state = Code(rawValue: -172)
        static let fatal = Code(rawValue: -150)
        static let purgeQueue = Code(rawValue: -152)
        static let purgeInflight = Code(rawValue: -151)
        static let unknownTopicOrPartition = Code(rawValue: 3)
        static let leaderNotAvailable = Code(rawValue: 5)
        static let notLeaderForPartition = Code(rawValue: 6)
        static let requestTimedOut = Code(rawValue: 7)
        static let networkException = Code(rawValue: 13)
        static let coordinatorLoadInProgress = Code(rawValue: 14)
        static let coordinatorNotAvailable = Code(rawValue: 15)
        static let notCoordinator = Code(rawValue: 16)
        static let notEnoughReplicas = Code(rawValue: 19)
        static let rebalanceInProgress = Code(rawValue: 27)
        static let kafkaStorageError = Code(rawValue: 56)
        static let invalidMessage = Code(rawValue: 2)
        static let messageSizeTooLarge = Code(rawValue: 10)
        static let recordListTooLarge = Code(rawValue: 18)
        static let invalidRequiredAcks = Code(rawValue: 21)
        static let topicAuthorizationFailed = Code(rawValue: 29)
        static let clusterAuthorizationFailed = Code(rawValue: 31)
        static let invalidRecord = Code(rawValue: 87)
        /// The group's members use another rebalance protocol (eager against cooperative).
        package static let inconsistentGroupProtocol = Code(rawValue: 23)
        /// Another member joined the group with this member's `group.instance.id`.
        package static let fencedInstanceID = Code(rawValue: 82)

        // This module's own codes.
        /// A configuration value was rejected (by us or by librdkafka).
        package static let configuration = Code(rawValue: 100_001)
        /// The client is closed or closing.
        static let closed = Code(rawValue: 100_002)
        /// librdkafka could not create a handle or object.
        static let creation = Code(rawValue: 100_003)

        package var description: String {
            switch self {
            case .configuration: return "configuration"
            case .closed: return "closed"
            case .creation: return "creation"
            default: return String(cString: rd_kafka_err2name(rd_kafka_resp_err_t(rawValue: rawValue)))
            }
        }
    }

    package let code: Code
    /// librdkafka's error name, e.g. `_QUEUE_FULL` or `NOT_LEADER_FOR_PARTITION`.
    package let name: String
    /// A human-readable reason (librdkafka's text where there is one).
    package let reason: String
    /// A fatal error leaves the client unusable: flush/close it and restart.
    package let isFatal: Bool
    /// A retriable error may succeed if the operation is tried again.
    package let isRetriable: Bool
    let file: String
    let line: UInt

    package init(
        code: Code,
        reason: String,
        isFatal: Bool = false,
        isRetriable: Bool = false,
        file: String = #fileID,
        line: UInt = #line
    ) {
        self.code = code
        self.name = code.description
        self.reason = reason
        self.isFatal = isFatal
        self.isRetriable = isRetriable
        self.file = file
        self.line = line
    }

    /// The record itself was refused, by librdkafka or the broker: too large for `message.max.bytes` or the topic's
    /// `max.message.bytes`, invalid, for a partition the topic does not have, or for a topic this client may not
    /// write. Producing the same record again cannot succeed (unlike ``isRetriable`` errors, and unlike a broker that
    /// is down, which the producer's own retries outlast).
    package var refusesRecord: Bool { Self.recordRefusals.contains(code) }

    /// `NAME: reason`, for people (logs, the command line); ``file`` and ``line`` say where it was raised.
    package var description: String { "\(name): \(reason)" }

    // MARK: - Factories

    /// Converts a librdkafka error code at the call site.
    static func rdKafka(
        _ err: rd_kafka_resp_err_t,
        reason: String? = nil,
        isFatal: Bool = false,
        file: String = #fileID,
        line: UInt = #line
    ) -> KafkaError {
        let code = Code(rawValue: err.rawValue)
        return KafkaError(
            code: code,
            reason: reason ?? String(cString: rd_kafka_err2str(err)),
            isFatal: isFatal || code == .fatal,
            isRetriable: Self.retriableCodes.contains(code),
            file: file,
            line: line
        )
    }

    /// Converts an `rd_kafka_error_t` (and destroys it).
    static func consuming(_ error: OpaquePointer, file: String = #fileID, line: UInt = #line) -> KafkaError {
        defer { rd_kafka_error_destroy(error) }
        let code = Code(rawValue: rd_kafka_error_code(error).rawValue)
        return KafkaError(
            code: code,
            reason: String(cString: rd_kafka_error_string(error)),
            isFatal: rd_kafka_error_is_fatal(error) != 0,
            isRetriable: rd_kafka_error_is_retriable(error) != 0 || Self.retriableCodes.contains(code),
            file: file,
            line: line
        )
    }

    static func configuration(_ reason: String, file: String = #fileID, line: UInt = #line) -> KafkaError {
        KafkaError(code: .configuration, reason: reason, file: file, line: line)
    }

    static func closed(file: String = #fileID, line: UInt = #line) -> KafkaError {
        KafkaError(code: .closed, reason: "the client is closed", file: file, line: line)
    }

    private static let recordRefusals: Set<Code> = [
        .invalidMessage, .messageSizeTooLarge, .recordListTooLarge, .invalidRequiredAcks, .topicAuthorizationFailed,
        .clusterAuthorizationFailed, .invalidRecord, .unknownPartition, .invalidArgument, .badMessage,
    ]

    private static let retriableCodes: Set<Code> = [
        .transport, .allBrokersDown, .messageTimedOut, .timedOut, .queueFull, .leaderNotAvailable,
        .notLeaderForPartition, .requestTimedOut, .networkException, .coordinatorLoadInProgress,
        .coordinatorNotAvailable, .notCoordinator, .notEnoughReplicas, .rebalanceInProgress, .kafkaStorageError,
    ]
}
