/// Why a ``RecordProducer`` could not write a record, as the dispatcher needs it: whether trying again can help.
struct RecordProduceError: Error, Sendable, CustomStringConvertible {
    /// The producer's own error name, e.g. `MSG_SIZE_TOO_LARGE`: a bounded metric label.
    let code: String
    let reason: String
    /// False when the record itself was refused (too large, invalid, not authorised): the dispatcher then ends its
    /// event as ``Outcome/abandoned`` instead of producing it again and again.
    let isRetriable: Bool

    var description: String { "\(code): \(reason)" }
}
