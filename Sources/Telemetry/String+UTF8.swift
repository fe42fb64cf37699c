extension String {
    /// Calls `body` with the string's UTF-8 bytes, valid only during the call: a native string's storage read in
    /// place (``withUTF8`` needs a mutable copy, which costs a retain and a release), else a contiguous copy.
    @inlinable
    package func withUTF8InPlace<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        if let result = try utf8.withContiguousStorageIfAvailable(body) { return result }
        var bridged = self
        return try bridged.withUTF8(body)
    }
}
