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
}
