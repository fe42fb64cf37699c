/// A command-line mistake, reported on stderr with exit status 64.
struct BenchUsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
