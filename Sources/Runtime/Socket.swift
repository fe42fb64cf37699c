@preconcurrency import Glibc
internal import CLinuxScheduler

/// A resolved socket address (IPv4 or IPv6).
package struct SocketAddress: CustomStringConvertible, Sendable {
    var storage = sockaddr_storage()
    var length: socklen_t = 0
    var family: Int32 { Int32(storage.ss_family) }

    /// `127.0.0.1:443` or `[::1]:443`.
    package var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        var storage = storage
        return withUnsafePointer(to: &storage) { pointer in
            if family == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    var raw = address.pointee.sin6_addr
                    inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count))
                    return "[\(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))]"
                        + ":\(UInt16(bigEndian: address.pointee.sin6_port))"
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                var raw = address.pointee.sin_addr
                inet_ntop(AF_INET, &raw, &text, socklen_t(text.count))
                return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                    + ":\(UInt16(bigEndian: address.pointee.sin_port))"
            }
        }
    }
}

/// Thin helpers over BSD sockets; every descriptor they return is non-blocking and close-on-exec.
package enum Socket {
    /// Resolves `host` (a name or an IP literal) with `getaddrinfo`, preferring IPv4 (for listening). Blocking.
    static func resolve(host: String, port: Int) throws(SocketError) -> SocketAddress {
        let addresses = try resolveAll(host: host, port: port)
        return addresses.first { $0.family == AF_INET } ?? addresses[0]
    }

    /// Every address `host` (a name or an IPv4/IPv6 literal) resolves to with `getaddrinfo`, IPv4 and IPv6, in the
    /// resolver's order (RFC 6724), without duplicates; never empty. Blocking.
    package static func resolveAll(host: String, port: Int) throws(SocketError) -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &result)
        guard status == 0, let first = result else {
            throw SocketError(.connectFailed, reason: "getaddrinfo \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(result) }
        var addresses: [SocketAddress] = []
        var seen: Set<String> = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            cursor = entry.pointee.ai_next
            let family = entry.pointee.ai_family
            guard family == AF_INET || family == AF_INET6, let source = entry.pointee.ai_addr else { continue }
            var address = SocketAddress()
            address.length = min(entry.pointee.ai_addrlen, socklen_t(MemoryLayout<sockaddr_storage>.size))
            withUnsafeMutableBytes(of: &address.storage) { raw in
                raw.copyMemory(from: UnsafeRawBufferPointer(start: source, count: Int(address.length)))
            }
            if seen.insert(address.description).inserted { addresses.append(address) }
        }
        guard !addresses.isEmpty else {
            throw SocketError(.connectFailed, reason: "getaddrinfo \(host): no IPv4 or IPv6 address")
        }
        return addresses
    }

    /// Starts a non-blocking connect. Returns the descriptor; completion is signalled by writability.
    package static func connect(to address: SocketAddress) throws(SocketError) -> Int32 {
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
            | Int32(SOCK_CLOEXEC.rawValue), 0)
        if fd < 0 { throw SocketError(.connectFailed, reason: "socket: \(errnoText())") }
        setNoDelay(fd)
        var address = address
        let result = withUnsafePointer(to: &address.storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, address.length) }
        }
        if result != 0 && errno != EINPROGRESS {
            let text = errnoText()
            close(fd)
            throw SocketError(.connectFailed, reason: "connect: \(text)")
        }
        return fd
    }

    /// The pending error of a socket after a non-blocking connect (0 when connected).
    package static func pendingError(_ fd: Int32) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length) != 0 { return errno }
        return value
    }

    package static func setNoDelay(_ fd: Int32) {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Makes the next `close` send a TCP RST instead of a FIN (abrupt drop).
    package static func setLingerZero(_ fd: Int32) {
        var value = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &value, socklen_t(MemoryLayout<linger>.size))
    }

    /// Binds and listens; returns the descriptor and the bound port (useful with port 0).
    package static func listen(host: String, port: Int, backlog: Int32) throws(SocketError) -> (fd: Int32, port: Int) {
        let address: SocketAddress
        do { address = try resolve(host: host, port: port) } catch { throw SocketError(.bindFailed, reason: error.reason) }
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
            | Int32(SOCK_CLOEXEC.rawValue), 0)
        if fd < 0 { throw SocketError(.bindFailed, reason: "socket: \(errnoText())") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var bindAddress = address
        let bound = withUnsafePointer(to: &bindAddress.storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, address.length) }
        }
        if bound != 0 || Glibc.listen(fd, backlog) != 0 {
            let text = errnoText()
            close(fd)
            throw SocketError(.bindFailed, reason: "bind/listen \(host):\(port): \(text)")
        }
        var local = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &local) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        let boundPort: Int
        if Int32(local.ss_family) == AF_INET6 {
            boundPort = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            }
        } else {
            boundPort = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
            }
        }
        return (fd, boundPort)
    }

    /// True when `host` is an IPv4 or IPv6 literal.
    package static func isIPAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }
}
