import ToolSupport

/// Area `mock`: `callpush mock-apns` (token mode, a real key) under h2load posting valid, JWT-authenticated APNs
/// alert requests (`authorization`, `apns-topic`, `apns-push-type`, `apns-priority`, a 91-byte payload), 4
/// connections × 100 streams, against nghttpd serving the same requests (200 with an empty body). Both are single
/// processes with one event-loop thread; CPU per answered request comes from `wait4`.
enum MockArea {
    static let connections = 4
    static let streams = 100

    static func run(_ options: BenchOptions) async -> AreaResult {
        var result = AreaResult()
        guard let tools = ExternalTool.require(["h2load", "nghttpd"], for: "mock area") else { return result }
        let bed: MockAPNsBed
        do { bed = try MockAPNsBed.make() } catch {
            print("  FAILED mock area: \(error)")
            return result
        }
        defer { bed.remove() }
        let h2load = H2Load(path: tools["h2load"]!)
        var samples = (mock: [Double](), mockCPU: [Double](), nghttpd: [Double](), nghttpdCPU: [Double](),
                       mockRefused: 0, nghttpdRefused: 0)
        for _ in 0..<options.repetitions {
            do {
                let (mock, port) = try bed.startMock()
                let ours = try h2load.run(url: "https://127.0.0.1:\(port)\(MockAPNsBed.path)", connections: connections,
                                          streams: streams, seconds: options.seconds, bodyPath: bed.bodyPath,
                                          headers: bed.h2loadHeaders)
                mock.terminate(grace: .seconds(1))
                let nghttpd = try Nghttpd.start(path: tools["nghttpd"]!, certificate: bed.certificate,
                                                documentRoot: bed.documentRoot)
                let reference = try h2load.run(url: "https://127.0.0.1:\(nghttpd.port)\(MockAPNsBed.path)",
                                               connections: connections, streams: streams, seconds: options.seconds,
                                               bodyPath: bed.bodyPath, headers: bed.h2loadHeaders)
                let nghttpdCPU = nghttpd.stop()
                samples.mock.append(ours.twoHundredsPerSecond)
                samples.mockCPU.append(ours.cpuPer100k(serverSeconds: mock.cpuSeconds))
                samples.mockRefused += ours.done - ours.twoHundreds
                samples.nghttpd.append(reference.twoHundredsPerSecond)
                samples.nghttpdCPU.append(reference.cpuPer100k(serverSeconds: nghttpdCPU))
                samples.nghttpdRefused += reference.done - reference.twoHundreds
            } catch {
                print("  FAILED mock-apns vs nghttpd: \(error)")
            }
        }
        guard !samples.mock.isEmpty else { return result }
        let label = "-c \(connections) -m \(streams)"
        // The mock's non-2xx are the streams h2load opens before the first valid token raises the limit from 1
        // (APNs' rule for token connections); h2load does not retry them.
        print("  \(label): mock-apns \(BenchFormat.rate(Median.of(samples.mock))) answered 200 "
            + "(server cpu/100k \(BenchFormat.seconds(Median.of(samples.mockCPU))), refused \(samples.mockRefused)), "
            + "nghttpd \(BenchFormat.rate(Median.of(samples.nghttpd))) "
            + "(server cpu/100k \(BenchFormat.seconds(Median.of(samples.nghttpdCPU))), non-2xx \(samples.nghttpdRefused))")
        result.report(BenchRatio(area: .mock, name: "mock-apns 200s/s vs nghttpd, JWT APNs requests \(label)",
                                 value: Median.of(samples.mock), reference: Median.of(samples.nghttpd),
                                 target: .atLeast(1.0)))
        result.report(BenchRatio(area: .mock, name: "mock-apns cpu/req vs nghttpd \(label)",
                                 value: Median.of(samples.mockCPU), reference: Median.of(samples.nghttpdCPU),
                                 target: nil))
        return result
    }
}
