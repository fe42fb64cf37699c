import Foundation
@preconcurrency import Glibc

/// Reads a file handle as lines of bytes (without the `\n`), in chunks, so large inputs stream. Each read returns
/// what is available, so an interactive pipe (mock-apns control lines) gets every line as soon as it is written.
struct LineReader: Sequence, IteratorProtocol {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private var start = 0
    private var finished = false

    init(_ handle: FileHandle) {
        self.handle = handle
    }

    mutating func next() -> [UInt8]? {
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[start..<newline])
                start = newline + 1
                return line
            }
            if finished {
                guard start < buffer.count else { return nil }
                let line = Array(buffer[start...])
                start = buffer.count
                return line
            }
            buffer.removeFirst(start)
            start = 0
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = chunk.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { finished = true } else { buffer.append(contentsOf: chunk[0..<count]) }
        }
    }
}
