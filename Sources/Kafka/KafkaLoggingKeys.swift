/// Logger metadata keys used by this module.
enum KafkaLoggingKeys {
    static let groupID = "kafka.group.id"
    static let clientID = "kafka.client.id"
    static let topic = "kafka.topic"
    static let partition = "kafka.partition"
    static let offset = "kafka.offset"
    static let error = "kafka.error"
    static let facility = "kafka.facility"
    /// Messages a partition's next owner reads again (``KafkaHandoverLedger``).
    static let uncommittedMessages = "kafka.uncommitted_messages"
}
