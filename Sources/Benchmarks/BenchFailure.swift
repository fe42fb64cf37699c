/// A measurement that could not be made (a tool failed, a server did not start); the area reports it and the
/// run goes on with the next one.
struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
