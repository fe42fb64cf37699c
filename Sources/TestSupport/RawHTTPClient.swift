internal import Foundation
@preconcurrency import Glibc

/// A deliberately dumb TCP client for poking the telemetry server with well-formed and malformed bytes.
package final class RawHTTPClient {
    package let fd: Int32

    package init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else { throw POSIXError(.ECONNREFUSED) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    package func send(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Reads until the server closes (or the 10 s receive timeout passes).
    package func readAll() -> String {
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            data.append(contentsOf: buffer[0..<count])
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// True when the server has neither answered nor closed the connection (a non-blocking read would block).
    package var isOpenWithoutData: Bool {
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_DONTWAIT | MSG_PEEK)) < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
    }

    package static func request(port: Int, _ text: String) throws -> String {
        let client = try RawHTTPClient(port: port)
        client.send(text)
        return client.readAll()
    }
}

extension String {
    package var statusLine: String { components(separatedBy: "\r\n").first ?? "" }
    package var body: String {
        guard let range = range(of: "\r\n\r\n") else { return "" }
        return String(self[range.upperBound...])
    }
}
