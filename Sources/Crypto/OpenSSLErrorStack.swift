internal import COpenSSL

/// The thread-local OpenSSL error queue (every module that calls OpenSSL reads it through this one type).
package enum OpenSSLErrorStack {
    /// Removes every queued error and returns their texts, oldest first.
    static func drain() -> [String] {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
            messages.append(String(decoding: bytes, as: UTF8.self))
            if messages.count >= 16 { ERR_clear_error(); break }
        }
        return messages
    }

    /// Removes every queued error and returns them as one line (`"no OpenSSL error"` when the queue was empty).
    package static func drainedDescription() -> String {
        let messages = drain()
        return messages.isEmpty ? "no OpenSSL error" : messages.joined(separator: "; ")
    }

    /// Discards stale errors before an operation whose failure we want to report precisely.
    package static func clear() { ERR_clear_error() }
}
