import APNsMock

// `callpush-bench apns-throughput [seconds]`: APNsClient vs h2load against the mock APNs server over 1, 2 and 4
// connections. The full benchmark executable is still to be built.
let arguments = CommandLine.arguments.dropFirst()
if arguments.first == "apns-throughput" {
    let seconds = arguments.dropFirst().first.flatMap { Int($0) } ?? 5
    let pairs = try await APNsThroughputBenchmark.compare(duration: .seconds(seconds))
    for pair in pairs {
        print(pair.client)
        print(pair.h2load)
        let ratio = pair.h2load.pushesPerSecond > 0 ? pair.client.pushesPerSecond / pair.h2load.pushesPerSecond : 0
        print("ratio APNsClient/h2load over \(pair.client.connections) connection(s): \((ratio * 1000).rounded() / 1000)")
    }
} else {
    print("callpush-bench: not yet built (try: callpush-bench apns-throughput [seconds])")
}
