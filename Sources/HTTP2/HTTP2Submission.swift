public import Runtime

/// One request of ``HTTP2ClientConnection/submit(batch:)``: the request, when to give up, and its completion. A struct
/// rather than a tuple: a closure inside a tuple array is stored in the generic (maximally abstract) form, so putting
/// it in and taking it out cost a reabstraction thunk (an allocation and an extra call) each.
public struct HTTP2Submission: Sendable {
    public var request: HTTP2Request
    /// When to give up (`timeout`); nil: never.
    public var deadline: HTTP2Deadline?
    public var completion: HTTP2ClientConnection.Completion

    public init(request: HTTP2Request, deadline: HTTP2Deadline?, completion: @escaping HTTP2ClientConnection.Completion) {
        self.request = request
        self.deadline = deadline
        self.completion = completion
    }
}
