extension Duration {
    /// Milliseconds clamped into `Int32` for librdkafka timeout arguments.
    var kafkaTimeoutMilliseconds: Int32 {
        Int32(clamping: max(0, inMilliseconds))
    }
}
