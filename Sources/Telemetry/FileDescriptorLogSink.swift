@preconcurrency import Glibc

/// Writes lines to a file descriptor (stdout, 1, by default) with one `write(2)` per line, so lines from
/// different threads never interleave.
package struct FileDescriptorLogSink: LogSink {
    let fileDescriptor: Int32

    package init(fileDescriptor: Int32 = 1) {
        self.fileDescriptor = fileDescriptor
    }

    package func write(line: String) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(fileDescriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }
}
