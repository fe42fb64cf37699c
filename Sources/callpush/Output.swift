@preconcurrency import Glibc

/// Line-oriented stdout for commands whose first line other programs read (bootstrap servers, listen address):
/// every line is written and flushed at once, even when stdout is a pipe.
enum Output {
    static func line(_ text: String) {
        var line = text + "\n"
        line.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(1, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 { return }
                offset += written
            }
        }
    }

    /// A progress line on stderr that overwrites itself on a terminal.
    static func progress(_ text: String) {
        var line = (isatty(2) != 0 ? "\r\u{1B}[2K" : "") + text + (isatty(2) != 0 ? "" : "\n")
        line.withUTF8 { buffer in _ = write(2, buffer.baseAddress, buffer.count) }
    }
}
