extension Duration {
    /// Whole milliseconds, as librdkafka's `*.ms` settings and timeouts want them.
    var kafkaMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    /// Milliseconds clamped into `Int32` for librdkafka timeout arguments.
    var kafkaTimeoutMilliseconds: Int32 {
        Int32(clamping: max(0, kafkaMilliseconds))
    }
}
