internal import Foundation

/// Small file helpers for key and certificate files.
enum FileBytes {
    /// The bytes of the file at `path`.
    static func read(_ path: String) throws(CryptoError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CryptoError(.fileUnreadable, "cannot read \(path)")
        }
        return [UInt8](data)
    }

    /// Writes `bytes` to `path` atomically with POSIX `permissions` (e.g. 0o600 for private keys).
    static func write(_ bytes: [UInt8], to path: String, permissions: Int) throws(CryptoError) {
        do {
            try Data(bytes).write(to: URL(fileURLWithPath: path), options: .atomic)
            try FileManager.default.setAttributes([.posixPermissions: permissions], ofItemAtPath: path)
        } catch {
            throw CryptoError(.fileUnwritable, "cannot write \(path): \(error)")
        }
    }
}
