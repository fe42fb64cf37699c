/// The command line: `callpush-bench [area…] [--seconds N] [--repeat N] [--quick] [--soak-minutes N]
/// [--latency-max-rate N] [--results FILE]`.
struct BenchOptions: Sendable {
    /// Areas to run, in suite order; all of them when none was named.
    var areas: [BenchArea] = BenchArea.allCases
    /// Seconds per timed measurement (h2load `-D`, the client's duration, JSON rounds scale with it).
    var seconds: Double = 2
    /// Repetitions of every measurement; medians are reported. Default 3 (`--quick`: 1).
    var repetitions: Int = 3
    /// Short measurements and small counts: checks that everything runs, numbers are rough.
    var quick = false
    /// Minutes of the memory area's steady-rate run with faults; nil for its short default (90 s after 20 s of
    /// warm-up; `--quick`: 10 s after 3 s).
    var soakMinutes: Double?
    /// The latency area's maximum rate in events/s, instead of measuring it with bursts (nil): two builds compared
    /// at the same rates (the measured maximum moves several-fold between runs on a shared machine).
    var latencyMaximumRate: Double?
    /// Set in the process of its own that an area runs in (``OwnProcessArea``): run the areas here and write what they
    /// measured to this file. nil: such areas start that process.
    var resultsPath: String?
    var help = false

    static let usage = """
        Usage: callpush-bench [area…] [--seconds N] [--repeat N] [--quick] [--soak-minutes N]
                              [--latency-max-rate N] [--results FILE]

        Runs the benchmark suite (release builds only) and prints every measurement as a ratio against a
        reference measured in the same run. Areas (default: all, then a summary table):
        \(BenchArea.allCases.map { "  \($0.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)) \($0.summary)" }.joined(separator: "\n"))

        Options:
          --seconds N   seconds per timed measurement (default 2; --quick: 1)
          --repeat N    repeat each measurement N times and report medians (default 3; --quick: 1)
          --quick       short runs and small counts (allowed in debug builds, with a warning)
          --soak-minutes N
                        the memory area's steady run at 1000 events/s with faults lasts N minutes
                        (default: 90 s after 20 s of warm-up), e.g. --soak-minutes 30 for a half-hour soak
          --latency-max-rate N
                        the latency area drives 10/25/50/75 % of N events/s instead of measuring its maximum
                        with bursts (compare two builds at the same rates)
          --results FILE
                        run the areas in this process and also write their results to FILE; without it the
                        kafka and latency areas run in a child process (this option) with MALLOC_ARENA_MAX=8,
                        as `callpush run`
          --help        this text
        """

    /// Parses `arguments` (without the program name).
    /// - Throws: a message for an unknown area or option.
    static func parse(_ arguments: [String]) throws(BenchUsageError) -> BenchOptions {
        var options = BenchOptions()
        var areas: [BenchArea] = []
        var secondsGiven: Double?
        var repetitionsGiven: Int?
        var index = 0
        func value(_ name: String) throws(BenchUsageError) -> Double {
            index += 1
            guard index < arguments.count, let number = Double(arguments[index]), number > 0 else {
                throw BenchUsageError("\(name) needs a positive number")
            }
            return number
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "--seconds": secondsGiven = try value(argument)
            case "--repeat": repetitionsGiven = max(1, Int(try value(argument)))
            case "--quick": options.quick = true
            case "--soak-minutes": options.soakMinutes = try value(argument)
            case "--latency-max-rate": options.latencyMaximumRate = try value(argument)
            case "--results":
                index += 1
                guard index < arguments.count else { throw BenchUsageError("--results needs a file") }
                options.resultsPath = arguments[index]
            case "--help", "-h": options.help = true
            default:
                guard let area = BenchArea(rawValue: argument) else {
                    throw BenchUsageError("unknown area or option '\(argument)'; see 'callpush-bench --help'")
                }
                if !areas.contains(area) { areas.append(area) }
            }
            index += 1
        }
        if !areas.isEmpty { options.areas = BenchArea.allCases.filter(areas.contains) }
        options.seconds = secondsGiven ?? (options.quick ? 1 : 2)
        options.repetitions = repetitionsGiven ?? (options.quick ? 1 : 3)
        return options
    }
}

