// swift-tools-version:6.0
// callpush: call events from Kafka to APNs over HTTP/2, in Swift on Linux.
// No Swift package dependencies: C libraries come from Debian (librdkafka, nghttp2, OpenSSL).
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "callpush",
    // Linux only: the event loops use epoll, and the C libraries come from Debian.
    products: [
        .executable(name: "callpush", targets: ["callpush"]),
        .executable(name: "callpush-bench", targets: ["Benchmarks"]),
    ],
    targets: [
        // MARK: - C libraries (system-library targets; shim headers wrap macros and variadics)
        .systemLibrary(
            name: "CRdKafka",
            pkgConfig: "rdkafka",
            providers: [.apt(["librdkafka-dev"])]
        ),
        .systemLibrary(
            name: "CNGHTTP2",
            pkgConfig: "libnghttp2",
            providers: [.apt(["libnghttp2-dev"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        /// glibc's <malloc.h> (mallinfo2, malloc_trim, mallopt): part of libc, nothing to install or link.
        .systemLibrary(name: "CGlibcMalloc"),
        /// sched_setattr(2) for the event loops' threads (a raw system call) and the epoll, eventfd and TCP headers
        /// Glibc's module map leaves out: nothing to install or link.
        .systemLibrary(name: "CLinuxScheduler"),

        // MARK: - Swift modules
        .target(name: "Telemetry", swiftSettings: swiftSettings),
        .target(name: "Kafka", dependencies: ["CRdKafka", "Telemetry"], swiftSettings: swiftSettings),
        .target(name: "Crypto", dependencies: ["COpenSSL"], swiftSettings: swiftSettings),
        // Runtime, TLS, HTTP2: dynamic exclusivity checks (swift_beginAccess on every class-property mutation) were
        // ~12 % of the client's CPU in release profiles; each module's mutable state is confined to one loop thread
        // per object (the event loop, the TLS transport, the HTTP/2 connection).
        .target(name: "Runtime", dependencies: ["CLinuxScheduler", "Telemetry"],
                swiftSettings: swiftSettings + [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]),
        .target(name: "TLS", dependencies: ["Runtime", "COpenSSL", "Crypto"],
                swiftSettings: swiftSettings + [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]),
        .target(name: "HTTP2", dependencies: ["Runtime", "TLS", "CNGHTTP2", "Telemetry"],
                swiftSettings: swiftSettings + [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]),
        // HTTP2Server: the server side, for the mock APNs, the benchmarks and the tests; APNs and Worker do not see it.
        .target(name: "HTTP2Server", dependencies: ["Runtime", "TLS", "HTTP2", "CNGHTTP2", "Crypto", "Telemetry"],
                swiftSettings: swiftSettings + [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]),
        .target(name: "APNs", dependencies: ["Runtime", "TLS", "HTTP2", "Crypto", "Telemetry"], swiftSettings: swiftSettings),
        .target(name: "APNsMock", dependencies: ["APNs", "Runtime", "TLS", "HTTP2", "HTTP2Server", "Crypto", "Telemetry"], swiftSettings: swiftSettings),
        .target(name: "Worker", dependencies: ["Kafka", "APNs", "Telemetry"], swiftSettings: swiftSettings),
        .target(
            name: "EmbeddedPipeline",
            dependencies: ["Worker", "Kafka", "APNs", "APNsMock", "Crypto", "Telemetry", "CGlibcMalloc"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "callpush",
            dependencies: ["Worker", "EmbeddedPipeline", "Kafka", "APNs", "APNsMock", "Crypto", "Telemetry", "CGlibcMalloc"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "Benchmarks",
            dependencies: ["Kafka", "Runtime", "TLS", "HTTP2", "HTTP2Server", "APNs", "APNsMock", "Worker", "EmbeddedPipeline", "Crypto", "Telemetry",
                           "BenchSupport", "ToolSupport", "CGlibcMalloc"],
            swiftSettings: swiftSettings
        ),
        /// Measurement code shared by the benchmark executable and the gated measurement tests; not in any product module.
        .target(name: "BenchSupport", dependencies: ["Kafka", "Runtime", "TLS", "HTTP2", "HTTP2Server", "APNs", "APNsMock", "Crypto", "Telemetry",
                                                     "ToolSupport"], swiftSettings: swiftSettings),

        // MARK: - Tests

        /// Running other programs, free ports, finding installed tools and the package root: for the tests (through
        /// TestSupport) and callpush-bench; not in any product module.
        .target(name: "ToolSupport", swiftSettings: swiftSettings),
        /// Helpers shared by the test targets; re-exports ToolSupport. Not part of any product.
        .target(name: "TestSupport", dependencies: ["Telemetry", "ToolSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "ToolSupportTests", dependencies: ["ToolSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "TelemetryTests", dependencies: ["Telemetry", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "KafkaTests", dependencies: ["Kafka", "Telemetry", "TestSupport", "BenchSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "CryptoTests", dependencies: ["Crypto", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "HTTP2Tests", dependencies: ["Runtime", "TLS", "HTTP2", "HTTP2Server", "Crypto", "Telemetry", "TestSupport", "BenchSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "APNsTests",
            dependencies: ["APNs", "APNsMock", "Crypto", "Runtime", "TLS", "HTTP2", "Telemetry", "TestSupport", "BenchSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "WorkerTests",
            dependencies: ["Worker", "EmbeddedPipeline", "Kafka", "APNs", "APNsMock", "Runtime", "Telemetry", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "CLITests", dependencies: ["callpush", "Benchmarks", "TestSupport"], swiftSettings: swiftSettings),
    ]
)
