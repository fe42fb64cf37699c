/// A problem with the push to send, reported as one line.
struct SendProblem: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
