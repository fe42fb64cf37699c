import ToolSupport

/// nghttpd (nghttp2-server) on a free loopback port with the bench certificate, as the reference server.
struct Nghttpd {
    let process: ChildProcess
    let port: Int

    /// Starts it with `-m 1000` (concurrent streams) and waits until it listens.
    /// - Parameter documentRoot: what it serves. Default: the certificate's empty root (every path answers 404).
    /// - Throws: ``BenchFailure`` when it does not come up.
    static func start(path: String, certificate: BenchCertificate, documentRoot: String? = nil) throws(BenchFailure)
        -> Nghttpd
    {
        let port = FreePort.next()
        let process = try BenchFailure.starting(
            ChildProcess(["-m", "1000", "-d", documentRoot ?? certificate.documentRoot, "-a", "127.0.0.1", String(port),
                          certificate.privateKeyPath, certificate.certificatePath],
                         executable: path, output: .discard, errors: .discard))
        guard FreePort.waitUntilListening(port) else {
            process.terminate(grace: .seconds(1))
            throw BenchFailure("nghttpd did not start on port \(port)")
        }
        return Nghttpd(process: process, port: port)
    }

    /// Stops it; returns the CPU seconds it used over its whole life.
    @discardableResult
    func stop() -> Double {
        process.terminate(grace: .seconds(1))
        return process.cpuSeconds
    }
}
