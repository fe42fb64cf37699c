/// The request line of an HTTP/1.1 request head; headers are read past but not kept.
struct HTTPRequestHead {
    let method: String
    let path: String

    /// Index just past `\r\n\r\n`, or nil when the head is not complete yet.
    static func endOfHead(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 3..<bytes.count
        where bytes[index] == 10 && bytes[index - 1] == 13 && bytes[index - 2] == 10 && bytes[index - 3] == 13 {
            return index + 1
        }
        return nil
    }

    /// Parses `METHOD SP target SP HTTP/1.x`; nil for anything else (the caller answers 400).
    init?(parsing bytes: [UInt8]) {
        guard let lineEnd = bytes.firstIndex(of: 13), lineEnd + 1 < bytes.count, bytes[lineEnd + 1] == 10 else {
            return nil
        }
        let parts = bytes[..<lineEnd].split(separator: 32, omittingEmptySubsequences: false)
        guard parts.count == 3,
            let method = String(validating: parts[0], as: UTF8.self),
            let target = String(validating: parts[1], as: UTF8.self),
            let version = String(validating: parts[2], as: UTF8.self),
            version == "HTTP/1.1" || version == "HTTP/1.0",
            !method.isEmpty, method.utf8.allSatisfy({ (65...90).contains($0) }),
            target.hasPrefix("/")
        else { return nil }
        self.method = method
        self.path = String(target.prefix { $0 != "?" })
    }
}
