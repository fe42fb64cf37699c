import Glibc
import Testing
import ToolSupport

@Suite struct FreePortTests {
    /// A listening socket on 127.0.0.1:`port`, or -1.
    static func listen(on port: Int) -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, Glibc.listen(descriptor, 4) == 0 else {
            close(descriptor)
            return -1
        }
        return descriptor
    }

    @Test func theFreePortCanBeBoundAndIsSeenListening() throws {
        let port = FreePort.next()
        #expect((1024...65_535).contains(port))
        #expect(!FreePort.waitUntilListening(port, timeout: .milliseconds(50)), "nobody listens on it yet")
        let descriptor = Self.listen(on: port)
        #expect(descriptor >= 0, "port \(port) could not be bound")
        defer { close(descriptor) }
        #expect(FreePort.waitUntilListening(port))
    }

    @Test func successiveFreePortsCanAllBeBound() {
        var descriptors: [Int32] = []
        defer { for descriptor in descriptors { close(descriptor) } }
        for _ in 0..<5 {
            let port = FreePort.next()
            let descriptor = Self.listen(on: port)
            #expect(descriptor >= 0, "port \(port) could not be bound")
            descriptors.append(descriptor)
        }
    }
}
