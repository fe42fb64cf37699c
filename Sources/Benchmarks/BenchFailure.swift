import ToolSupport

/// A measurement that could not be made (a tool failed, a server did not start); the area reports it and the
/// run goes on with the next one.
struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }

    /// `child`, started; one that could not start is a failure with the ``ProcessStartError``'s words.
    static func starting(_ child: @autoclosure () throws(ProcessStartError) -> ChildProcess) throws(BenchFailure)
        -> ChildProcess
    {
        do { return try child() } catch { throw BenchFailure(error.description) }
    }

    /// What `body` returns; an error it throws (a socket, TLS or HTTP/2 error, say) is a failure naming `step`.
    static func during<T>(_ step: String, _ body: () async throws -> T) async throws(BenchFailure) -> T {
        do { return try await body() } catch let error as BenchFailure { throw error } catch { throw BenchFailure("\(step): \(error)") }
    }
}
