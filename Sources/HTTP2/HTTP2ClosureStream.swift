internal import Runtime

/// A stream whose completion is a closure: ``HTTP2ClientConnection/submit(_:deadline:completion:)``. `@unchecked
/// Sendable` restates its base class's; its own field is a constant.
final class HTTP2ClosureStream: HTTP2ClientStream, @unchecked Sendable {
    private let completion: HTTP2ClientConnection.Completion

    init(_ request: HTTP2Request, deadline: HTTP2Deadline, completion: @escaping HTTP2ClientConnection.Completion) {
        self.completion = completion
        super.init(request, deadline: deadline)
    }

    override func completed(_ result: Result<HTTP2Response, HTTP2Error>) { completion(result) }
}
